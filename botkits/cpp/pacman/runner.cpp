// A Pac-Man bot (role 0): the strategy. Copy it to start your own.
//
// Every round it walks to the nearest bean by breadth-first search, keeping
// off the cells a ghost could reach this round (a ghost's cell and its
// neighbours, unless the ghosts are frozen; nothing is dangerous while the
// Pac-Man cannot be caught). With no safe bean in reach it takes the open
// portal (which ends the level with a bonus), or else runs from the ghosts.
//
// The protocol (the seat, the init lines, the rounds, the framed answers) is
// in pacman.h; it claims the Pac-Man's role and plays on either seat.
#include <deque>
#include <functional>
#include <set>
#include <utility>

#include "pacman/pacman.h"

using namespace pacman;

typedef std::pair<int, int> Key;
static Key key(Point p) { return Key(p.x, p.y); }

// dangerous is the set of cells a ghost may reach this round: its own and,
// unless the ghosts are frozen, its neighbours.
static std::set<Key> dangerous(const Game& g) {
  std::set<Key> danger;
  if (g.invulnerable > 0) return danger;
  bool frozen = g.skills[SKILL_FREEZE] > 0;
  for (int j = 0; j < 3; j++) {
    danger.insert(key(g.ghosts[j]));
    if (!frozen) {
      for (int a : MOVES) danger.insert(key(step(g.ghosts[j], a)));
    }
  }
  return danger;
}

// first_step is the first action of a shortest walk (breadth first over
// walkable cells) from the Pac-Man to a cell where goal holds; -1 if none.
static int first_step(const Game& g, const std::function<bool(Point)>& walkable, const std::function<bool(Point)>& goal) {
  std::set<Key> seen;
  seen.insert(key(g.pacman));
  std::deque<std::pair<Point, int> > queue;
  for (int a : MOVES) {
    Point n = step(g.pacman, a);
    if (walkable(n)) {
      seen.insert(key(n));
      queue.push_back(std::make_pair(n, a));
    }
  }
  while (!queue.empty()) {
    Point at = queue.front().first;
    int first = queue.front().second;
    queue.pop_front();
    if (goal(at)) return first;
    for (int a : MOVES) {
      Point n = step(at, a);
      if (!seen.count(key(n)) && walkable(n)) {
        seen.insert(key(n));
        queue.push_back(std::make_pair(n, first));
      }
    }
  }
  return -1;
}

// flee is the action that ends farthest from the nearest ghost.
static int flee(const Game& g) {
  int best = STAY, best_dist = -1;
  const int actions[5] = {STAY, UP, LEFT, DOWN, RIGHT};
  for (int a : actions) {
    Point to = g.move(g.pacman, a);
    int d = 1 << 30;
    for (int j = 0; j < 3; j++) d = std::min(d, std::abs(g.ghosts[j].x - to.x) + std::abs(g.ghosts[j].y - to.y));
    if (d > best_dist) {
      best = a;
      best_dist = d;
    }
  }
  return best;
}

static int turn(const Game& g) {
  std::set<Key> danger = dangerous(g);
  // The portal ends the level: go there only when no bean is left in reach.
  int a = first_step(
      g, [&](Point p) { return g.at(p) != WALL && !danger.count(key(p)) && !(g.portal_open && p == g.portal); },
      [&](Point p) { return g.at(p) == BEAN || g.at(p) == BONUS; });
  if (a >= 0) return a;
  if (g.portal_open) {
    a = first_step(g, [&](Point p) { return g.at(p) != WALL && !danger.count(key(p)); },
                   [&](Point p) { return p == g.portal; });
    if (a >= 0) {
      log("to the portal");
      return a;
    }
  }
  return flee(g);
}

int main() { play_pacman(turn); }
