/* random_legal.c: a Snake algorithm that moves its head to a random
 * neighbour that is not a wall or a snake's cell, when there is one.
 *
 * Plain C against playerbase.h; the kit compiles it with g++ -std=c++11
 * (gcc accepts it too). Build and play it (from the kit's folder):
 *
 *   g++ -std=c++11 -O2 -I. -o /tmp/snakebot snake/snake_main.cpp examples/random_legal.c
 *   arena run --game snake exec:/tmp/snakebot arena/snake-random
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "playerbase.h"

/* A cell the head may enter: on the board, not a wall, not a snake. */
static int is_free(struct Player *p, int x, int y) {
  char c;
  if (x < 0 || y < 0 || x >= p->row_cnt || y >= p->col_cnt) return 0;
  c = p->mat[x][y];
  return c != '#' && c != '1' && c != '2';
}

void init(struct Player *player) {
  srand((unsigned)time(NULL) ^ (unsigned)clock());
  /* stdout goes to the bot's log (stderr), not to the game. */
  printf("random_legal: %dx%d board, head at (%d,%d)\n", player->row_cnt, player->col_cnt,
         player->your_posx, player->your_posy);
}

struct Point walk(struct Player *player) {
  static const int dx[4] = {-1, 1, 0, 0};
  static const int dy[4] = {0, 0, -1, 1};
  struct Point options[4];
  int n = 0, i;
  for (i = 0; i < 4; i++) {
    int x = player->your_posx + dx[i], y = player->your_posy + dy[i];
    if (is_free(player, x, y)) {
      options[n].X = x;
      options[n].Y = y;
      n++;
    }
  }
  if (n == 0) {
    /* Trapped: every move loses, any neighbour will do. */
    struct Point up = {player->your_posx - 1, player->your_posy};
    printf("round %d: trapped\n", player->round);
    return up;
  }
  return options[rand() % n];
}
