// pacman.h: the Pac-Man-vs-ghosts protocol (the Saiblo judger's) and the
// rules a bot needs to follow the game, in C++11.
//
// You should not need to edit this file: the strategies live in
// pacman/runner.cpp (the Pac-Man) and pacman/ghosts.cpp (the three ghosts).
//
// One bot plays the Pac-Man (role 0), the other the three ghosts (role 1);
// the role is claimed by the bot's first message, whatever its seat. The
// platform writes plain lines to stdin:
//   - the seat, "0" or "1";
//   - at each level start the init line (JSON: the board, positions, scores);
//   - "player 0 send info" / "player 1 send info" when the other seat answered;
//   - after each round the actions line {"pacman_action": 3, "ghosts_action": [0, 2, 4]}.
// It sends no state during a level: Game::play_round() replays the rules on
// each actions line, so the Game you get is up to date (positions, the board
// without the eaten beans, skills, scores, portal).
//
// The bot answers with a 4-byte big-endian length, then the UTF-8 JSON
// message: {"role":0,"action":"3"} for the Pac-Man, {"role":1,"action":"1 0 4"}
// for the ghosts. Seat 0 answers after the init line and after each actions
// line (after the next level's init line when that round ended a level);
// seat 1 after each "player 0 send info". play_pacman() / play_ghosts() do
// all of this.
//
// This is a copy of the Python kit's pacman.py, rule for rule; the engine's
// tests (engine/pacman/kits_test.go) replay real matches through both.
#ifndef ARENA_PACMAN_H
#define ARENA_PACMAN_H

#include <sys/select.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "json.h"

namespace pacman {

// Roles.
const int PACMAN = 0;
const int GHOSTS = 1;

// Cell values of Game::board.
const int WALL = 0;
const int EMPTY = 1;
const int BEAN = 2;  // 1 point
const int BONUS = 3;  // a bonus bean: 2 points
const int SPEED = 4;  // skill items, picked up by walking over them
const int MAGNET = 5;
const int SHIELD_UP = 6;
const int DOUBLE = 7;
const int FREEZE = 8;
const int PORTAL = 9;

// Actions. "Up" is x + 1: rows grow upwards.
const int STAY = 0;
const int UP = 1;     // x + 1
const int LEFT = 2;   // y - 1
const int DOWN = 3;   // x - 1
const int RIGHT = 4;  // y + 1
const int MOVES[4] = {UP, LEFT, DOWN, RIGHT};

// Indices of Game::skills (pacman_skill_status).
const int SKILL_DOUBLE = 0;  // beans score double
const int SKILL_SPEED = 1;   // the Pac-Man moves twice per round
const int SKILL_MAGNET = 2;  // it eats the 3x3 square around it
const int SKILL_SHIELD = 3;  // a count: each absorbs one catch
const int SKILL_FREEZE = 4;  // the ghosts stand still

// Per level: the rounds it lasts and the round after which the portal opens
// (0: no portal).
const int LEVELS[3][2] = {{500, 60}, {400, 50}, {300, 0}};

// A cell: x is the row (growing upwards), y the column.
struct Point {
  int x, y;
  Point() : x(0), y(0) {}
  Point(int x_, int y_) : x(x_), y(y_) {}
  bool operator==(const Point& o) const { return x == o.x && y == o.y; }
  bool operator!=(const Point& o) const { return !(*this == o); }
};

// step is where action a leads from p, walls not considered.
inline Point step(Point p, int a) {
  static const int dx[5] = {0, 1, 0, -1, 0}, dy[5] = {0, 0, -1, 0, 1};
  if (a < 0 || a > 4) a = STAY;
  return Point(p.x + dx[a], p.y + dy[a]);
}

// log prints a debug line on stderr (printf-style): the replay and the web
// viewer show it next to the round it belongs to (up to 4 KiB per round).
inline void log(const char* format, ...) __attribute__((format(printf, 1, 2)));
inline void log(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

// legal is a if it is an action 0..4, else STAY: anything else would be an
// illegal action, which loses the match.
inline int legal(int a) { return a >= 0 && a <= 4 ? a : STAY; }

// Game is what the bot knows: the level's init line, updated round by
// round from the actions.
struct Game {
  int seat, role;
  int level;       // 1..3
  int round;       // rounds played in this level
  int max_rounds;  // the level ends (ghosts +75) after this many rounds
  int size;
  std::vector<std::vector<int> > board;  // board[x][y]; eaten beans and items become EMPTY
  Point pacman;
  Point ghosts[3];
  // Skills in effect in the next round, indexed by SKILL_*: rounds left,
  // or the shield count.
  int skills[5];
  int invulnerable;  // > 0: the Pac-Man cannot be caught next round
  int score[2];      // Pac-Man, ghosts
  int beans_left;
  Point portal;      // (-1, -1) on level 3
  bool portal_open;  // stepping on it ends the level, with a bonus
  bool level_over;   // the last round ended the level
  bool game_over;    // and it was the last level
  int portal_at, survival, catches;

  explicit Game(int role_)
      : seat(-1), role(role_), level(0), round(0), max_rounds(0), size(0), invulnerable(0),
        beans_left(0), portal(-1, -1), portal_open(false), level_over(false), game_over(false),
        portal_at(0), survival(0), catches(0) {
    std::fill(skills, skills + 5, 0);
    score[0] = score[1] = 0;
  }

  bool inside(Point p) const { return p.x >= 0 && p.x < size && p.y >= 0 && p.y < size; }

  // at is the value of cell p; outside the board is a wall.
  int at(Point p) const { return inside(p) ? board[p.x][p.y] : WALL; }

  // move is where action a really takes a piece from p: into a wall it stays.
  Point move(Point p, int a) const {
    Point q = step(p, a);
    return at(q) != WALL ? q : p;
  }

  // start_level takes a level's init line (already parsed).
  void start_level(const json::Value& init) {
    level = init["level"].as_int();
    round = init["round"].as_int();
    size = init["board_size"].as_int();
    const json::Value& b = init["board"];
    board.assign(b.size(), std::vector<int>());
    for (size_t x = 0; x < b.size(); x++) {
      for (size_t y = 0; y < b[x].size(); y++) board[x].push_back(b[x][y].as_int());
    }
    for (int k = 0; k < 5; k++) skills[k] = init["pacman_skill_status"][k].as_int();
    pacman = point(init["pacman_coord"]);
    for (int j = 0; j < 3; j++) ghosts[j] = point(init["ghosts_coord"][j]);
    score[0] = init["score"][0].as_int();
    score[1] = init["score"][1].as_int();
    beans_left = init["beannumber"].as_int();
    portal_open = init["portal_available"].as_bool();
    portal = point(init["portal_coord"]);
    if (level >= 1 && level <= 3) {
      max_rounds = LEVELS[level - 1][0];
      portal_at = LEVELS[level - 1][1];
    }
    survival = catches = 0;
    level_over = game_over = false;
    log("level %d: %dx%d, %d beans", level, size, size, beans_left);
  }

  // play_round replays one round of the rules (as Arena's
  // engine/pacman plays it) on the submitted actions.
  void play_round(int pac, const int ghost_actions[3]) {
    pac = legal(pac);
    int gh[3];
    for (int j = 0; j < 3; j++) gh[j] = legal(ghost_actions[j]);
    round++;
    int start[5];  // in effect during this round
    std::copy(skills, skills + 5, start);
    const int ticking[3] = {SKILL_DOUBLE, SKILL_MAGNET, SKILL_SPEED};
    for (int i = 0; i < 3; i++) {
      if (skills[ticking[i]] > 0) skills[ticking[i]]--;
    }
    if (start[SKILL_FREEZE] > 0) {
      gh[0] = gh[1] = gh[2] = STAY;
      skills[SKILL_FREEZE]--;
    }

    // Moves. The catch test compares positions in half cells: the start,
    // the middle of a single step (or the first of two), the end.
    std::vector<Point> path(1, pacman);
    for (int i = 0; i < (start[SKILL_SPEED] > 0 ? 2 : 1); i++) {
      eat(start);
      pacman = move(pacman, pac);
      path.push_back(pacman);
    }
    std::vector<Point> pac_half = halves(path);
    std::vector<Point> ghost_half[3];
    for (int j = 0; j < 3; j++) {
      std::vector<Point> p(1, ghosts[j]);
      ghosts[j] = move(ghosts[j], gh[j]);
      p.push_back(ghosts[j]);
      ghost_half[j] = halves(p);
    }
    eat(start);

    // Catch: a ghost within half a cell of the Pac-Man at the middle or the
    // end of the round.
    bool caught = false;
    for (int k = 1; k <= 2; k++) {
      for (int j = 0; j < 3; j++) {
        if (std::abs(ghost_half[j][k].x - pac_half[k].x) + std::abs(ghost_half[j][k].y - pac_half[k].y) <= 1) caught = true;
      }
    }
    bool eaten = false;
    if (caught && invulnerable == 0 && start[SKILL_SHIELD] > 0) {
      skills[SKILL_SHIELD]--;
      invulnerable = 1;
      score[1] += 10;
      survival = 0;
    } else if (caught && invulnerable == 0) {
      eaten = true;
      invulnerable = 3;
      score[0] -= 60;
      score[1] += 50;
      catches++;
      survival = 0;
      std::fill(skills, skills + 5, 0);
      pacman = respawn();
    } else {
      if (invulnerable > 0) invulnerable--;
      survival++;
      if (survival >= 100) {
        score[0] += 50;
        survival = 0;
      }
    }
    if (catches >= 5) {
      score[1] += 60;
      catches = 0;
    }

    // The level ends through the open portal, with every bean eaten, or
    // when time is up.
    if (portal_open && !eaten && std::find(path.begin(), path.end(), portal) != path.end()) {
      finish();
      return;
    }
    if (portal_at > 0 && round >= portal_at) portal_open = true;
    if (beans_left <= 0) {
      finish();
      return;
    }
    if (round >= max_rounds) {
      score[1] += 75;
      end_level();
    }
  }

 private:
  static Point point(const json::Value& v) { return Point(v[0].as_int(), v[1].as_int()); }

  // halves samples a path of 2 or 3 cells as 3 points in half cells: a
  // single step gets its middle.
  static std::vector<Point> halves(const std::vector<Point>& path) {
    std::vector<Point> h;
    if (path.size() == 3) {
      for (size_t i = 0; i < 3; i++) h.push_back(Point(2 * path[i].x, 2 * path[i].y));
      return h;
    }
    h.push_back(Point(2 * path[0].x, 2 * path[0].y));
    h.push_back(Point(path[0].x + path[1].x, path[0].y + path[1].y));
    h.push_back(Point(2 * path[1].x, 2 * path[1].y));
    return h;
  }

  // eat takes what lies under the Pac-Man (the 3x3 square with the magnet).
  void eat(const int active[5]) {
    int r = active[SKILL_MAGNET] > 0 ? 1 : 0;
    int points = active[SKILL_DOUBLE] > 0 ? 2 : 1;
    for (int x = pacman.x - r; x <= pacman.x + r; x++) {
      for (int y = pacman.y - r; y <= pacman.y + r; y++) {
        if (!(x >= 1 && x <= size - 2 && y >= 1 && y <= size - 2)) continue;
        switch (board[x][y]) {
          case BEAN: score[0] += points; beans_left--; break;
          case BONUS: score[0] += 2 * points; beans_left--; break;
          case SPEED: skills[SKILL_SPEED] = 8; break;
          case MAGNET: skills[SKILL_MAGNET] = 8; break;
          case DOUBLE: skills[SKILL_DOUBLE] = 8; break;
          case FREEZE: skills[SKILL_FREEZE] = 2; break;
          case SHIELD_UP: skills[SKILL_SHIELD]++; break;
          default: continue;
        }
        board[x][y] = EMPTY;
      }
    }
  }

  // finish ends a level left through the portal or emptied of beans.
  void finish() {
    if (beans_left <= 0) score[0] += 50;
    score[0] += static_cast<int>((max_rounds - round) * 0.43);
    end_level();
  }

  void end_level() {
    std::fill(skills, skills + 5, 0);
    survival = catches = 0;
    level_over = true;
    game_over = level >= 3;
  }

  // respawn is where an eaten Pac-Man reappears: the EMPTY cell farthest
  // from its nearest ghost, the first in row order among equals.
  Point respawn() const {
    Point best = pacman;
    int best_dist = 0;
    for (int x = 0; x < size; x++) {
      for (int y = 0; y < size; y++) {
        if (board[x][y] != EMPTY) continue;
        int d = 1 << 30;
        for (int j = 0; j < 3; j++) d = std::min(d, std::abs(ghosts[j].x - x) + std::abs(ghosts[j].y - y));
        if (d > best_dist) {
          best = Point(x, y);
          best_dist = d;
        }
      }
    }
    return best;
  }
};

// Input reads lines from stdin straight from the file descriptor, so that
// the bot can wait for a line with a time limit (select).
class Input {
 public:
  Input() : eof_(false) {}

  // ready tells whether a line (or the end of the input) is there within
  // timeout_ms milliseconds.
  bool ready(double timeout_ms) {
    typedef std::chrono::steady_clock clock;
    clock::time_point deadline = clock::now() + std::chrono::microseconds(static_cast<long long>(timeout_ms * 1000));
    while (buf_.find('\n') == std::string::npos && !eof_) {
      double left = std::chrono::duration<double, std::milli>(deadline - clock::now()).count();
      if (!fill(left < 0 ? 0 : left)) return false;
    }
    return true;
  }

  // line reads the next line without its newline (and surrounding blanks);
  // false at the end of the input.
  bool line(std::string* out) {
    while (buf_.find('\n') == std::string::npos && !eof_) fill(-1);
    size_t i = buf_.find('\n');
    std::string l;
    if (i != std::string::npos) {
      l = buf_.substr(0, i);
      buf_.erase(0, i + 1);
    } else if (!buf_.empty()) {
      l.swap(buf_);
    } else {
      return false;
    }
    size_t a = l.find_first_not_of(" \t\r"), b = l.find_last_not_of(" \t\r");
    *out = a == std::string::npos ? "" : l.substr(a, b - a + 1);
    return true;
  }

 private:
  // fill reads what is available, waiting at most timeout_ms (forever
  // when negative); false when nothing came in time.
  bool fill(double timeout_ms) {
    if (timeout_ms >= 0) {
      fd_set fds;
      FD_ZERO(&fds);
      FD_SET(0, &fds);
      struct timeval tv;
      tv.tv_sec = static_cast<long>(timeout_ms / 1000);
      tv.tv_usec = static_cast<long>((timeout_ms - tv.tv_sec * 1000.0) * 1000);
      int n = select(1, &fds, NULL, NULL, &tv);
      if (n == 0) return false;
      if (n < 0 && errno == EINTR) return false;
    }
    char chunk[1 << 16];
    ssize_t n = read(0, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) {
      eof_ = true;
    } else {
      buf_.append(chunk, static_cast<size_t>(n));
    }
    return true;
  }

  std::string buf_;
  bool eof_;
};

// send writes one framed message: a 4-byte big-endian length, then the JSON
// {"role":role,"action":action}, and flushes it.
inline void send(int role, const std::string& action) {
  std::string data = "{\"role\":" + std::to_string(role) + ",\"action\":\"" + action + "\"}";
  unsigned long n = data.size();
  unsigned char head[4] = {static_cast<unsigned char>(n >> 24), static_cast<unsigned char>(n >> 16),
                           static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n)};
  if (std::fwrite(head, 1, 4, stdout) != 4 || std::fwrite(data.data(), 1, data.size(), stdout) != data.size() ||
      std::fflush(stdout) != 0) {
    std::exit(0);  // the match is over
  }
}

// How long seat 0 waits for the next level's init line after a round that
// its tracking says ended the level (the answer time is 1 s).
const double LEVEL_WAIT_MS = 400;

// play is the judger loop. action(game) gives the message's action string.
inline void play(int role, const std::function<std::string(const Game&)>& action) {
  Input in;
  Game game(role);
  std::string line;

  std::function<void()> answer = [&]() {
    std::string a;
    try {
      a = action(game);
    } catch (const std::exception& e) {
      // A bug in the strategy costs one round, not the match: stand still
      // (an illegal action string would lose the match).
      log("turn failed: %s", e.what());
      a = role == PACMAN ? "0" : "0 0 0";
    }
    send(role, a);
  };

  // 1. The seat: "0" or "1".
  if (!in.line(&line) || (line != "0" && line != "1")) {
    log("pacman: expected the seat, got %.60s", line.c_str());
    return;
  }
  game.seat = line[0] - '0';
  // 2. The first level's init line.
  if (!in.line(&line)) return;
  game.start_level(json::parse(line));
  // Seat 0 opens every round: it owes an answer now, and after each
  // actions line. It answers once nothing more is waiting on stdin, or,
  // after a round that ended a level, once the next init line is read (it
  // follows the actions line at once; none comes after the last level).
  bool owe = game.seat == 0;
  double wait_ms = 0;
  // 3. The rounds.
  for (;;) {
    if (owe && !in.ready(wait_ms)) {
      if (game.level_over) log("pacman: no init line after the end of level %d", game.level);
      answer();
      owe = false;
      continue;
    }
    if (!in.line(&line)) return;  // the match is over
    if (line == "player 0 send info") {
      answer();  // seat 1's turn
    } else if (line == "player 1 send info") {
      // seat 0 learns that seat 1 answered; the actions line follows
    } else if (!line.empty() && line[0] == '{' && line.find("\"level\"") != std::string::npos) {
      game.start_level(json::parse(line));
      wait_ms = 0;
    } else if (!line.empty() && line[0] == '{' && line.find("\"pacman_action\"") != std::string::npos) {
      json::Value a = json::parse(line);
      int gh[3];
      for (int j = 0; j < 3; j++) gh[j] = a["ghosts_action"][j].as_int();
      game.play_round(a["pacman_action"].as_int(), gh);
      if (game.seat == 0) {
        owe = true;
        wait_ms = game.level_over ? LEVEL_WAIT_MS : 0;
      }
    } else if (!line.empty()) {
      log("pacman: unexpected line %.60s", line.c_str());
    }
  }
}

// play_pacman runs a Pac-Man bot: turn(game) returns the action (0..4) for
// each round. It returns when the input ends.
inline void play_pacman(const std::function<int(const Game&)>& turn) {
  play(PACMAN, [&](const Game& g) { return std::to_string(legal(turn(g))); });
}

// Moves are the three ghosts' actions.
struct Moves {
  int a[3];
};

// play_ghosts runs a ghosts bot: turn(game) returns the three ghosts'
// actions (0..4 each) for each round. It returns when the input ends.
inline void play_ghosts(const std::function<Moves(const Game&)>& turn) {
  play(GHOSTS, [&](const Game& g) {
    Moves m = turn(g);
    return std::to_string(legal(m.a[0])) + " " + std::to_string(legal(m.a[1])) + " " + std::to_string(legal(m.a[2]));
  });
}

}  // namespace pacman

#endif  // ARENA_PACMAN_H
