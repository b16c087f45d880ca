// Replays the engine's transcript through the C++ kit's rules.
//
// Build and run (from the repository's root):
//   g++ -std=c++11 -O2 -I botkits/cpp -o kitcheck engine/pacman/testdata/kitcheck.cpp
//   ./kitcheck TRANSCRIPT
//
// TestKitRules (engine/pacman/kits_test.go) writes the transcript, builds
// this program against botkits/cpp/pacman/pacman.h and runs it, as it runs
// kitcheck.py for the Python kit; the comments there say what is compared.
// Each seat's stdin, exactly as the platform delivered it, is fed to a
// pacman::Game the way the kit's input loop feeds it, and after every
// actions line the Game must hold the engine's state after that round. On
// the first round that differs, it prints both values of each field that
// differs and exits with 1; on success it prints how many rounds it
// compared.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pacman/pacman.h"

namespace {

struct Difference : std::runtime_error {
  explicit Difference(const std::string& what) : std::runtime_error(what) {}
};

std::string str(int v) { return std::to_string(v); }
std::string str(bool v) { return v ? "true" : "false"; }
std::string str(pacman::Point p) { return "[" + str(p.x) + ", " + str(p.y) + "]"; }

template <typename T>
void field(std::vector<std::string>* diff, const std::string& name, const T& kit, const T& engine) {
  if (str(kit) != str(engine)) diff->push_back(name + ": kit " + str(kit) + ", engine " + str(engine));
}

void list(std::vector<std::string>* diff, const std::string& name, const std::string& kit, const std::string& engine) {
  if (kit != engine) diff->push_back(name + ": kit " + kit + ", engine " + engine);
}

std::string ints(const int* v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; i++) s += (i ? ", " : "") + str(v[i]);
  return s + "]";
}

std::string ints(const json::Value& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); i++) s += (i ? ", " : "") + str(v[i].as_int());
  return s + "]";
}

pacman::Point point(const json::Value& v) { return pacman::Point(v[0].as_int(), v[1].as_int()); }

std::vector<std::string> differences(const pacman::Game& g, const json::Value& want, const std::vector<std::vector<int> >& board) {
  std::vector<std::string> diff;
  field(&diff, "level", g.level, want["level"].as_int());
  field(&diff, "round", g.round, want["round"].as_int());
  field(&diff, "pacman", g.pacman, point(want["pacman"]));
  for (int j = 0; j < 3; j++) field(&diff, "ghost " + str(j), g.ghosts[j], point(want["ghosts"][j]));
  list(&diff, "score", ints(g.score, 2), ints(want["score"]));
  list(&diff, "skills", ints(g.skills, 5), ints(want["skills"]));
  field(&diff, "invulnerable", g.invulnerable, want["invulnerable"].as_int());
  field(&diff, "survival", g.survival, want["survival"].as_int());
  field(&diff, "catches", g.catches, want["catches"].as_int());
  field(&diff, "beans left", g.beans_left, want["beans_left"].as_int());
  field(&diff, "portal open", g.portal_open, want["portal_open"].as_bool());
  field(&diff, "level over", g.level_over, want["level_over"].as_bool());
  field(&diff, "game over", g.game_over, want["game_over"].as_bool());
  if (g.board.size() != board.size()) {
    diff.push_back("board: kit " + str(int(g.board.size())) + " rows, engine " + str(int(board.size())));
    return diff;
  }
  int differ = 0;
  for (size_t x = 0; x < board.size(); x++) {
    for (size_t y = 0; y < board[x].size(); y++) {
      int kit = g.at(pacman::Point(int(x), int(y)));
      if (kit != board[x][y] && ++differ <= 5) {
        field(&diff, "board[" + str(int(x)) + "][" + str(int(y)) + "]", kit, board[x][y]);
      }
    }
  }
  if (differ > 5) diff.push_back("board: " + str(differ - 5) + " more cells differ");
  return diff;
}

// follow feeds seat's stdin to a Game and compares it with the engine
// after each round; it returns how many rounds were compared, or throws
// Difference at the first one that differs.
int follow(const json::Value& match, int seat) {
  const json::Value& rounds = match["rounds"];
  pacman::Game g(seat == match["pacman_seat"].as_int() ? pacman::PACMAN : pacman::GHOSTS);
  std::vector<std::vector<int> > board;
  size_t played = 0;
  std::string text = match["stdin"][seat].as_string();
  if (!text.empty() && text[text.size() - 1] == '\n') text.erase(text.size() - 1);
  std::istringstream lines(text);
  std::string raw;
  for (int i = 1; std::getline(lines, raw); i++) {
    size_t a = raw.find_first_not_of(" \t\r"), b = raw.find_last_not_of(" \t\r");
    std::string line = a == std::string::npos ? "" : raw.substr(a, b - a + 1);
    if (g.seat < 0 && (line == "0" || line == "1")) {
      g.seat = line[0] - '0';
    } else if (line == "player 0 send info" || line == "player 1 send info") {
    } else if (!line.empty() && line[0] == '{' && line.find("\"level\"") != std::string::npos) {
      json::Value init = json::parse(line);
      g.start_level(init);
      const json::Value& b0 = init["board"];
      board.assign(b0.size(), std::vector<int>());
      for (size_t x = 0; x < b0.size(); x++) {
        for (size_t y = 0; y < b0[x].size(); y++) board[x].push_back(b0[x][y].as_int());
      }
    } else if (!line.empty() && line[0] == '{' && line.find("\"pacman_action\"") != std::string::npos) {
      if (played == rounds.size()) {
        throw Difference("line " + str(i) + ": more actions lines than the " + str(int(played)) + " rounds the engine played");
      }
      const json::Value& want = rounds[played];
      played++;
      json::Value act = json::parse(line);
      int gh[3];
      for (int j = 0; j < 3; j++) gh[j] = act["ghosts_action"][j].as_int();
      g.play_round(act["pacman_action"].as_int(), gh);
      const json::Value& changed = want["board"];
      for (size_t k = 0; k < changed.size(); k++) {
        board[changed[k][0].as_int()][changed[k][1].as_int()] = changed[k][2].as_int();
      }
      std::vector<std::string> diff = differences(g, want, board);
      if (!diff.empty()) {
        std::string msg = "line " + str(i) + " " + line + ": the kit differs from the engine after level " +
                          str(want["level"].as_int()) + " round " + str(want["round"].as_int()) + " (turn " + str(int(played)) + "):";
        for (size_t k = 0; k < diff.size(); k++) msg += "\n\t" + diff[k];
        throw Difference(msg);
      }
    } else {
      throw Difference("line " + str(i) + ": unexpected line " + line.substr(0, 60));
    }
  }
  if (played != rounds.size()) {
    throw Difference(str(int(played)) + " actions lines, but the engine played " + str(int(rounds.size())) + " rounds");
  }
  return int(played);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kitcheck TRANSCRIPT\n");
    return 2;
  }
  std::ifstream f(argv[1]);
  std::stringstream data;
  data << f.rdbuf();
  json::Value transcript = json::parse(data.str());
  // start_level logs each level on stderr, as a bot's debug output does.
  if (!std::freopen("/dev/null", "w", stderr)) return 2;
  int compared = 0;
  bool failed = false;
  const json::Value& matches = transcript["matches"];
  for (size_t m = 0; m < matches.size(); m++) {
    const json::Value& match = matches[m];
    for (int seat = 0; seat < 2; seat++) {
      try {
        compared += follow(match, seat);
      } catch (const std::exception& e) {
        std::printf("%s (seed %lld, the Pac-Man on seat %d), seat %d's stdin, %s\n", match["name"].as_string().c_str(),
                    match["seed"].as_int64(), match["pacman_seat"].as_int(), seat, e.what());
        failed = true;
        break;  // the other seat reads the same rounds
      }
    }
  }
  if (failed) return 1;
  std::printf("compared %d rounds\n", compared);
  return 0;
}
