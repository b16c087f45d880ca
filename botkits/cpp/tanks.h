// tanks.h: the Tanks protocol. Read the state from stdin, write actions to
// stdout.
//
// You should not need to edit this file: the strategy lives in bot.cpp.
//
// Every turn the game writes one line of JSON (the state) to stdin and waits
// for one line on stdout: a JSON array of actions, e.g. [{"Type":1,"Direction":3}].
// tanks::play() runs that loop, calling your turn function once per state.
#ifndef ARENA_TANKS_H
#define ARENA_TANKS_H

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "json.h"

namespace tanks {

// Object types (the "Type" of a cell).
const int TANK = 0;
const int BARRIER = 1;          // bullets damage it; tanks cannot enter
const int NOT_DESTROYABLE = 2;  // stops bullets; tanks cannot enter
const int WATER = 3;            // bullets fly over it; tanks cannot enter

// Directions. (0,0) is the bottom-left cell and Y grows upward.
const int UP = 0;
const int DOWN = 1;
const int LEFT = 2;
const int RIGHT = 3;
const int DIRECTIONS[4] = {UP, DOWN, LEFT, RIGHT};
const char* const DIRECTION_NAMES[4] = {"up", "down", "left", "right"};

// Action types.
const int MOVE = 0;
const int SHOOT = 1;

// A cell of the board.
struct Point {
  int x, y;
  Point() : x(0), y(0) {}
  Point(int x_, int y_) : x(x_), y(y_) {}
  bool operator==(const Point& o) const { return x == o.x && y == o.y; }
  bool operator!=(const Point& o) const { return !(*this == o); }
  bool operator<(const Point& o) const { return x != o.x ? x < o.x : y < o.y; }  // for std::set
};

// The neighbour of cell p in direction d.
inline Point step(Point p, int d) {
  switch (d) {
    case UP: return Point(p.x, p.y + 1);
    case DOWN: return Point(p.x, p.y - 1);
    case LEFT: return Point(p.x - 1, p.y);
    default: return Point(p.x + 1, p.y);
  }
}

// One non-empty cell: a tank, barrier, indestructible block or water.
struct Content {
  Point pos;
  int type;
  int health;
  std::string userId;  // tanks only
};

// A bullet in flight; it moves 2 cells per turn in its direction.
struct Bullet {
  Point pos;
  int direction;
  std::string ownerId;
};

// One action; a turn answers with a list of them (only the first is used
// with the default settings; an empty list means "do nothing").
struct Action {
  int type;
  int direction;
};
typedef std::vector<Action> Actions;

// The answer "move one cell in direction d".
inline Actions move(int d) { return Actions(1, Action{MOVE, d}); }
// The answer "shoot in direction d" (ignored while your bullet flies).
inline Actions shoot(int d) { return Actions(1, Action{SHOOT, d}); }
// The answer "do nothing this turn".
inline Actions nothing() { return Actions(); }

// Debug output goes to stderr (std::cerr), never to stdout: stdout carries
// the answers. The replay and the web viewer show what you print there next
// to the turn it belongs to (up to 4 KiB per turn). Use:
//   tanks::log() << "shoot " << tanks::DIRECTION_NAMES[d] << "\n";
inline std::ostream& log() { return std::cerr; }

// One turn's view of the game.
class State {
 public:
  std::string myId;               // our tank's UserId
  std::vector<Content> contents;  // every non-empty cell
  std::vector<Bullet> bullets;
  int zoneRadius;
  int width, height;  // board size, the outer ring of indestructible blocks included
  const Content* me;  // our tank, or null when it is gone
  std::vector<const Content*> enemies;

  State(const json::Value& raw, const std::string& id) : myId(id), zoneRadius(0), width(0), height(0), me(0) {
    const json::Value::Items& cs = raw["ContentsInfo"].items();
    for (size_t i = 0; i < cs.size(); i++) {
      Content c;
      c.pos = Point(cs[i]["Coordinates"]["X"].as_int(), cs[i]["Coordinates"]["Y"].as_int());
      c.type = cs[i]["Type"].as_int();
      c.health = cs[i]["HealthCount"].as_int();
      c.userId = cs[i].get_string("UserId", "");
      contents.push_back(c);
      width = std::max(width, c.pos.x + 1);
      height = std::max(height, c.pos.y + 1);
    }
    const json::Value::Items& bs = raw["BulletsInfo"].items();
    for (size_t i = 0; i < bs.size(); i++) {
      Bullet b;
      b.pos = Point(bs[i]["Coordinates"]["X"].as_int(), bs[i]["Coordinates"]["Y"].as_int());
      b.direction = bs[i]["Direction"].as_int();
      b.ownerId = bs[i]["OwnerId"].as_string();
      bullets.push_back(b);
    }
    zoneRadius = raw["ZoneRadius"].as_int();
    // An index of the cells: grid_[y * width + x] is a position in contents, or -1.
    grid_.assign(width * height, -1);
    for (size_t i = 0; i < contents.size(); i++) {
      const Content& c = contents[i];
      if (c.pos.x >= 0 && c.pos.y >= 0) grid_[c.pos.y * width + c.pos.x] = static_cast<int>(i);
    }
    for (size_t i = 0; i < contents.size(); i++) {
      if (contents[i].type != TANK) continue;
      if (contents[i].userId == myId)
        me = &contents[i];
      else
        enemies.push_back(&contents[i]);
    }
  }

  bool onBoard(Point p) const { return p.x >= 0 && p.y >= 0 && p.x < width && p.y < height; }

  // The content at cell p, or null when the cell is empty.
  const Content* at(Point p) const {
    if (!onBoard(p) || grid_[p.y * width + p.x] < 0) return 0;
    return &contents[grid_[p.y * width + p.x]];
  }

  // Whether a tank may move into cell p (bullets do not block it).
  bool isFree(Point p) const { return onBoard(p) && at(p) == 0; }

  // Whether cell p is inside the zone of radius r. A tank outside loses 1
  // health per turn, and the radius shrinks by 1 every turn.
  bool inZone(Point p, int r) const { return inside(p.x, width, r) && inside(p.y, height, r); }
  bool inZone(Point p) const { return inZone(p, zoneRadius); }

 private:
  static bool inside(int c, int s, int r) { return s / 2 - r + s % 2 <= c && c <= s / 2 + r - 1; }
  std::vector<int> grid_;
};

// Run the bot: for every state line on stdin, call turn(state) and write its
// answer as one line on stdout. Returns 0 when stdin ends: return it from main.
template <typename TurnFunc>
int play(TurnFunc turn) {
  const char* env = std::getenv("ARENA_BOT_ID");  // our tank's UserId
  const std::string myId = env ? env : "";
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Actions actions;
    try {
      State state(json::parse(line), myId);
      actions = turn(state);
    } catch (const std::exception& e) {
      // A bug in the strategy costs one turn, not the whole match.
      std::cerr << "error: " << e.what() << "\n";
      actions.clear();
    }
    std::string out = "[";
    for (size_t i = 0; i < actions.size(); i++) {
      if (i) out += ",";
      out += "{\"Type\":" + std::to_string(actions[i].type) +
             ",\"Direction\":" + std::to_string(actions[i].direction) + "}";
    }
    out += "]\n";
    // Flush every turn: stdout to a pipe is fully buffered, and an answer
    // stuck in the buffer never reaches the game (the bot times out).
    std::cout << out << std::flush;
  }
  return 0;
}

}  // namespace tanks

#endif  // ARENA_TANKS_H
