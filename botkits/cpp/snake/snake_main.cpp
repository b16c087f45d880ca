// snake_main.cpp: the Snake protocol, the main() of a Snake bot. It drives
// an algorithm written against playerbase.h (the snaker interface).
//
// You should not need to edit this file: the algorithm lives in its own .c
// (or .cpp) file that defines init() and walk(). Build a bot with
//
//   g++ -std=c++11 -O2 -I. -o /tmp/snakebot snake/snake_main.cpp my_algo.c
//
// (from the kit's folder) or into an image with Dockerfile.snake.
//
// Every round the game writes one line of JSON (the state) to stdin and waits
// for one line on stdout, the cell the head moves to: {"X":x,"Y":y}. This
// file reads the line, fills struct Player, calls init() once before the
// first walk(), then walk() every round, and writes the answer.
//
// The algorithm's stdout never reaches the game: before calling it, main
// keeps the real stdout as a private descriptor for the answers and points
// descriptor 1 at stderr. printf() and std::cout in the algorithm land in
// the bot's log (the replay and the web viewer show it per round).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "../json.h"
#include "../playerbase.h"

namespace {

// The real stdout, kept for the answers; descriptor 1 is stderr from then on.
int protocol_fd = -1;

void redirect_stdout() {
  std::fflush(stdout);
  // Close-on-exec: a program the algorithm starts does not get it.
  protocol_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (protocol_fd < 0) {
    std::perror("snake_main: cannot keep stdout");
    std::exit(1);
  }
  if (dup2(2, 1) < 0) {
    std::perror("snake_main: cannot send stdout to stderr");
    std::exit(1);
  }
  // Descriptor 1 is now stderr; keep printf's output line-buffered (main
  // also flushes it after every call) so that each round's debug output is
  // logged with that round.
  std::setvbuf(stdout, 0, _IOLBF, BUFSIZ);
}

// Write all of the answer at once to the real stdout. write() has no
// buffer: the answer has left when it returns (nothing to flush).
bool send(const std::string& s) {
  const char* p = s.data();
  size_t left = s.size();
  while (left > 0) {
    ssize_t n = write(protocol_fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

// What the algorithm wrote goes out now, logged with this round.
void flush_algorithm_output() {
  std::fflush(stdout);
  std::cout.flush();
}

// The board of struct Player: row_cnt rows of col_cnt symbols, each row
// NUL-terminated, refilled every round.
struct Board {
  std::vector<std::vector<char> > rows;
  std::vector<char*> ptrs;

  char** fill(const json::Value& mat, int row_cnt, int col_cnt) {
    rows.assign(row_cnt, std::vector<char>(col_cnt + 1, '#'));
    ptrs.assign(row_cnt, 0);
    for (int x = 0; x < row_cnt; x++) {
      const std::string& s = x < static_cast<int>(mat.size()) ? mat[x].as_string() : std::string();
      for (int y = 0; y < col_cnt && y < static_cast<int>(s.size()); y++) rows[x][y] = s[y];
      rows[x][col_cnt] = '\0';
      ptrs[x] = rows[x].data();
    }
    return ptrs.empty() ? 0 : ptrs.data();
  }
};

void read_state(const json::Value& v, Board& board, Player& p) {
  p.row_cnt = v["row_cnt"].as_int();
  p.col_cnt = v["col_cnt"].as_int();
  p.mat = board.fill(v["mat"], p.row_cnt, p.col_cnt);
  p.your_posx = v["your_posx"].as_int();
  p.your_posy = v["your_posy"].as_int();
  p.opponent_posx = v.get_int("opponent_posx", -1);
  p.opponent_posy = v.get_int("opponent_posy", -1);
  p.your_status = v.get_int("your_status", 0);
  p.opponent_status = v.get_int("opponent_status", -1);
  p.your_score = v.get_int("your_score", 0);
  p.opponent_score = v.get_int("opponent_score", 0);
  p.round = v.get_int("round", 0);
  p.round_to_shrink = v.get_int("round_to_shrink", 0);
}

std::string answer(Point to) {
  return "{\"X\":" + std::to_string(to.X) + ",\"Y\":" + std::to_string(to.Y) + "}\n";
}

}  // namespace

int main() {
  redirect_stdout();
  Board board;
  Player player = Player();
  bool started = false;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Point to;
    try {
      read_state(json::parse(line), board, player);
      // The state is known before init(): the algorithm may look at the
      // board while it prepares.
      if (!started) {
        started = true;
        init(&player);
        flush_algorithm_output();
      }
      to = walk(&player);
    } catch (const std::exception& e) {
      // A bad state line, or an exception thrown by a C++ algorithm: say so
      // in the log and move up rather than miss the round.
      std::cerr << "snake_main: error: " << e.what() << "\n";
      to.X = player.your_posx - 1;
      to.Y = player.your_posy;
    }
    flush_algorithm_output();
    if (!send(answer(to))) return 0;  // the game has closed our stdout
  }
  return 0;
}
