// A Tanks bot: the strategy. This is the file to edit.
//
// Every turn, in this order:
//   1. dodge a bullet that would hit us this turn or the next;
//   2. shoot an enemy in line of fire (no indestructible block in between);
//   3. step out of an enemy's line of fire while our own bullet is still flying;
//   4. go back into the zone when we are about to leave it;
//   5. wait in ambush when the nearest enemy can step into our line of fire;
//   6. otherwise walk (breadth-first search) towards a cell in line with the
//      nearest enemy.
//
// The protocol (reading the state, writing the answer) is in tanks.h.
//
//   g++ -std=c++11 -O2 -o bot bot.cpp
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <queue>
#include <set>
#include <utility>
#include <vector>

#include "tanks.h"

using namespace tanks;

typedef std::set<Point> Cells;

static int distance(Point a, Point b) { return std::abs(a.x - b.x) + std::abs(a.y - b.y); }

static bool bulletInFlight(const State& s, const std::string& owner) {
  for (size_t i = 0; i < s.bullets.size(); i++)
    if (s.bullets[i].ownerId == owner) return true;
  return false;
}

// The cells every bullet crosses this turn (now) and next turn (soon). A
// bullet moves 2 cells per turn and stops at the first barrier or
// indestructible block. Tanks are not counted as stops: they may move away.
static void bulletPaths(const State& s, Cells& now, Cells& soon) {
  for (size_t i = 0; i < s.bullets.size(); i++) {
    Point p = s.bullets[i].pos;
    for (int k = 0; k < 5; k++) {  // its cell, then 2 cells this turn, 2 the next
      if (k > 0) p = step(p, s.bullets[i].direction);
      const Content* c = s.at(p);
      if (!s.onBoard(p) || (c && (c->type == BARRIER || c->type == NOT_DESTROYABLE))) break;
      (k <= 2 ? now : soon).insert(p);
    }
  }
}

// The direction to shoot from p to hit target, or -1: same row or column,
// and no indestructible block in between (water lets bullets pass, barriers
// break after enough hits).
static int lineOfFire(const State& s, Point p, Point target) {
  int d;
  if (p == target) return -1;
  if (p.x == target.x)
    d = target.y > p.y ? UP : DOWN;
  else if (p.y == target.y)
    d = target.x > p.x ? RIGHT : LEFT;
  else
    return -1;
  for (Point q = step(p, d); q != target; q = step(q, d)) {
    const Content* c = s.at(q);
    if (c && c->type == NOT_DESTROYABLE) return -1;
  }
  return d;
}

// Whether the enemy standing at cell `enemy` can move in one step to a cell
// that is in our line of fire from p.
static bool canStepIntoLine(const State& s, Point enemy, Point p) {
  for (int d = 0; d < 4; d++) {
    Point n = step(enemy, DIRECTIONS[d]);
    if (s.isFree(n) && lineOfFire(s, p, n) >= 0) return true;
  }
  return false;
}

// Whether a barrier stands between cells a and b (b is reached from a going
// in direction d).
static bool barrierBetween(const State& s, Point a, Point b, int d) {
  for (Point q = step(a, d); q != b; q = step(q, d)) {
    const Content* c = s.at(q);
    if (c && c->type == BARRIER) return true;
  }
  return false;
}

// Whether an enemy that can shoot now would hit cell p this very turn: a new
// bullet flies 3 cells on its first turn, so nobody can dodge it.
static bool threatened(const State& s, Point p, const std::vector<const Content*>& enemies) {
  for (size_t i = 0; i < enemies.size(); i++) {
    const Content* e = enemies[i];
    if (bulletInFlight(s, e->userId) || distance(p, e->pos) > 3) continue;
    int d = lineOfFire(s, e->pos, p);
    if (d >= 0 && !barrierBetween(s, e->pos, p, d)) return true;
  }
  return false;
}

// Breadth-first search: the first move of a shortest walk from start to a
// cell where goal(cell) holds, or -1 when there is none (or start already is
// one).
static int firstStep(const State& s, Point start, std::function<bool(Point)> goal,
                     std::function<bool(Point)> passable) {
  if (goal(start)) return -1;
  std::vector<bool> seen(s.width * s.height, false);
  std::queue<std::pair<Point, int> > queue;  // cell, first direction
  seen[start.y * s.width + start.x] = true;
  for (int d = 0; d < 4; d++) {
    Point n = step(start, DIRECTIONS[d]);
    if (s.isFree(n) && passable(n)) {
      seen[n.y * s.width + n.x] = true;
      queue.push(std::make_pair(n, DIRECTIONS[d]));
    }
  }
  while (!queue.empty()) {
    Point p = queue.front().first;
    int first = queue.front().second;
    queue.pop();
    if (goal(p)) return first;
    for (int d = 0; d < 4; d++) {
      Point n = step(p, DIRECTIONS[d]);
      if (s.isFree(n) && !seen[n.y * s.width + n.x] && passable(n)) {
        seen[n.y * s.width + n.x] = true;
        queue.push(std::make_pair(n, first));
      }
    }
  }
  return -1;
}

static Actions turn(const State& s) {
  if (!s.me) return nothing();  // our tank is gone
  const Point at = s.me->pos;
  // Where every bullet will fly this turn, and the turn after.
  Cells now, soon;
  bulletPaths(s, now, soon);

  // Inside the zone this turn and the next (it shrinks every turn).
  auto safe = [&](Point p) { return s.inZone(p, s.zoneRadius - 1); };
  // A cell we may move to this turn without being hit or burnt.
  auto canStand = [&](Point p) { return s.isFree(p) && !now.count(p) && s.inZone(p); };

  std::vector<const Content*> enemies = s.enemies;
  std::stable_sort(enemies.begin(), enemies.end(), [&](const Content* a, const Content* b) {
    return distance(at, a->pos) < distance(at, b->pos);
  });

  // The directions we may move in this turn, best first: cells no bullet
  // reaches next turn, inside next turn's zone, out of enemy fire.
  auto movesBestFirst = [&]() {
    auto badness = [&](int d) {
      Point p = step(at, d);
      return (soon.count(p) ? 4 : 0) + (safe(p) ? 0 : 2) + (threatened(s, p, enemies) ? 1 : 0);
    };
    std::vector<int> options;
    for (int d = 0; d < 4; d++)
      if (canStand(step(at, DIRECTIONS[d]))) options.push_back(DIRECTIONS[d]);
    std::stable_sort(options.begin(), options.end(), [&](int a, int b) { return badness(a) < badness(b); });
    return options;
  };

  // 1. Dodge: a bullet reaches our cell this turn or the next. (If it only
  //    arrives next turn, stepping into another bullet's way is no escape.)
  if (now.count(at) || soon.count(at)) {
    std::vector<int> options = movesBestFirst();
    for (size_t i = 0; i < options.size(); i++) {
      int d = options[i];
      if (now.count(at) || !soon.count(step(at, d))) {
        log() << "dodge " << DIRECTION_NAMES[d] << "\n";
        return move(d);
      }
    }
  }

  // 2. Shoot the nearest enemy in line of fire.
  if (!bulletInFlight(s, s.myId)) {
    for (size_t i = 0; i < enemies.size(); i++) {
      int d = lineOfFire(s, at, enemies[i]->pos);
      if (d >= 0) {
        log() << "shoot " << DIRECTION_NAMES[d] << " at " << enemies[i]->userId << "\n";
        return shoot(d);
      }
    }
  }

  // 3. Our bullet is still flying, so we cannot shoot back: leave the line
  //    of an enemy that is close enough to hit us at once.
  if (threatened(s, at, enemies)) {
    std::vector<int> options = movesBestFirst();
    for (size_t i = 0; i < options.size(); i++) {
      int d = options[i];
      if (!threatened(s, step(at, d), enemies)) {
        log() << "take cover " << DIRECTION_NAMES[d] << "\n";
        return move(d);
      }
    }
  }

  // The walks below avoid the cells bullets cross this turn.
  auto passable = [&](Point p) { return !now.count(p); };

  // 4. Back into the zone before it burns us.
  if (!safe(at)) {
    log() << "back to the zone\n";
    int d = firstStep(s, at, safe, passable);
    if (d < 0)  // next turn's zone is empty: at least stay in this one
      d = firstStep(s, at, [&](Point p) { return s.inZone(p); }, passable);
    return d >= 0 ? move(d) : nothing();
  }

  if (enemies.empty()) return nothing();
  const Content* target = enemies[0];

  // 5. Ambush: when the target can step into our line of fire, let it come
  //    (if it does, we shoot next turn). Walking towards its line while it
  //    walks towards ours, we would only swap rows with it forever.
  if (canStepIntoLine(s, target->pos, at)) {
    log() << "wait for " << target->userId << "\n";
    return nothing();
  }

  // 6. Hunt: walk to the nearest cell in line of fire with the target.
  auto inLine = [&](Point p) { return safe(p) && lineOfFire(s, p, target->pos) >= 0; };
  log() << "hunt " << target->userId << "\n";
  int d = firstStep(s, at, inLine, passable);
  return d >= 0 ? move(d) : nothing();  // nothing: stay
}

int main() { return play(turn); }
