// A ghosts bot (role 1): the strategy. Copy it to start your own.
//
// Every round each of the three ghosts walks a shortest path, found by
// breadth-first search, to where the Pac-Man is. Each ghost tries the
// directions in its own order, so that they do not all take the same one of
// several shortest paths.
//
// The protocol (the seat, the init lines, the rounds, the framed answers) is
// in pacman.h; it claims the ghosts' role and plays on either seat.
#include <deque>
#include <set>
#include <utility>

#include "pacman/pacman.h"

using namespace pacman;

// chase is the first action of a shortest walk from the ghost at from to
// the Pac-Man.
static int chase(const Game& g, Point from, int ghost) {
  if (from == g.pacman) return STAY;
  int order[4];
  for (int i = 0; i < 4; i++) order[i] = MOVES[(i + ghost) % 4];
  std::set<std::pair<int, int> > seen;
  seen.insert(std::make_pair(from.x, from.y));
  std::deque<std::pair<Point, int> > queue;
  for (int a : order) {
    Point n = step(from, a);
    if (g.at(n) != WALL) {
      seen.insert(std::make_pair(n.x, n.y));
      queue.push_back(std::make_pair(n, a));
    }
  }
  while (!queue.empty()) {
    Point at = queue.front().first;
    int first = queue.front().second;
    queue.pop_front();
    if (at == g.pacman) return first;
    for (int a : order) {
      Point n = step(at, a);
      if (!seen.count(std::make_pair(n.x, n.y)) && g.at(n) != WALL) {
        seen.insert(std::make_pair(n.x, n.y));
        queue.push_back(std::make_pair(n, first));
      }
    }
  }
  return STAY;
}

static Moves turn(const Game& g) {
  Moves m;
  for (int j = 0; j < 3; j++) m.a[j] = chase(g, g.ghosts[j], j);
  return m;
}

int main() { play_ghosts(turn); }
