// A Tanks bot with a C library from Debian (Jansson, libjansson-dev): the
// compose test copies the C++ kit, puts this file in place of bot.cpp and
// builds it with the kit's Dockerfile, as the kit's README says:
//   docker build --build-arg DEB_PACKAGES=libjansson-dev --build-arg LDLIBS=-ljansson .
// It parses the state with Jansson and goes after the first other tank: it
// shoots when in line, else it steps towards it.
#include <jansson.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

int main() {
  const char* env = std::getenv("ARENA_BOT_ID");
  std::string me = env ? env : "";
  std::string line;
  while (std::getline(std::cin, line)) {
    json_error_t err;
    json_t* state = json_loads(line.c_str(), 0, &err);
    int sx = -1, sy = -1, ex = -1, ey = -1;
    json_t* cells = state ? json_object_get(state, "ContentsInfo") : NULL;
    for (size_t i = 0; cells && i < json_array_size(cells); i++) {
      json_t* c = json_array_get(cells, i);
      if (json_integer_value(json_object_get(c, "Type")) != 0) continue;
      json_t* at = json_object_get(c, "Coordinates");
      int x = int(json_integer_value(json_object_get(at, "X"))), y = int(json_integer_value(json_object_get(at, "Y")));
      const char* id = json_string_value(json_object_get(c, "UserId"));
      if (id && me == id) {
        sx = x, sy = y;
      } else if (ex < 0) {
        ex = x, ey = y;
      }
    }
    if (!state) std::fprintf(stderr, "jansson: %s\n", err.text);
    json_decref(state);
    int type = 0, dir = -1;
    if (sx >= 0 && ex >= 0) {
      int dx = ex - sx, dy = ey - sy;
      if (dx == 0 || dy == 0) {
        type = 1;
        dir = dx == 0 ? (dy > 0 ? 0 : 1) : (dx < 0 ? 2 : 3);
      } else {
        dir = std::abs(dx) < std::abs(dy) ? (dx < 0 ? 2 : 3) : (dy > 0 ? 0 : 1);
      }
    }
    if (dir < 0) {
      std::printf("[]\n");
    } else {
      std::printf("[{\"Type\":%d,\"Direction\":%d}]\n", type, dir);
    }
    std::fflush(stdout);
  }
  return 0;
}
