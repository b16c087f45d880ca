// The editor's error links (web/static/errlinks.js) on each language's
// messages: node --test web/jstest/errlinks.test.mjs (cmd/arena's
// TestErrorLinksInNode runs it with the Go tests).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";

// The page's modules are ES modules in .js files, which Node reads as
// CommonJS outside a package of type "module": the module is imported
// from its text instead (it imports nothing).
const source = await readFile(new URL("../static/errlinks.js", import.meta.url), "utf8");
const { findLinks, segments, draftPath } = await import("data:text/javascript;base64," + Buffer.from(source).toString("base64"));

// links is what findLinks finds, as "path:line:col" and the text linked.
const links = (text, paths) => findLinks(text, paths).map((l) => [`${l.path}:${l.line}:${l.col}`, text.slice(l.start, l.end)]);

test("Go: the compiler's messages, relative to the build's folder", () => {
  const paths = ["go.mod", "bot/main.go", "tanks/tanks.go"];
  const log = `go build ./bot
# arena-botkit/bot
./bot/main.go:12:5: undefined: x
bot/main.go:30:2: declared and not used: y
tanks/tanks.go:7:1: syntax error: non-declaration statement outside function body`;
  assert.deepEqual(links(log, paths), [
    ["bot/main.go:12:5", "./bot/main.go:12:5"],
    ["bot/main.go:30:2", "bot/main.go:30:2"],
    ["tanks/tanks.go:7:1", "tanks/tanks.go:7:1"],
  ]);
});

test("Go: a panic's frames, by module path (-trimpath) or by the build's folder", () => {
  const paths = ["go.mod", "bot/main.go"];
  const stderr = `panic: runtime error: index out of range [3] with length 3

goroutine 1 [running]:
main.turn(...)
	arena-botkit/bot/main.go:41 +0x1d
main.main()
	/tmp/src/bot/main.go:88 +0x2a8
runtime.main()
	/usr/local/go/src/runtime/proc.go:283 +0x28b`;
  assert.deepEqual(links(stderr, paths), [
    ["bot/main.go:41:0", "arena-botkit/bot/main.go:41"],
    ["bot/main.go:88:0", "/tmp/src/bot/main.go:88"],
  ]);
});

test("g++: errors, notes and includes, with the kit's folders", () => {
  const paths = ["bot.cpp", "tanks.h", "snake/snake_main.cpp", "playerbase.h"];
  const log = `g++ -std=c++17 -O2 -static -o bot ./*.cpp
In file included from ./bot.cpp:3:
./tanks.h:40:6: note: declared here
./bot.cpp: In function 'int main()':
./bot.cpp:12:5: error: expected primary-expression before ';' token
snake/snake_main.cpp:3:10: fatal error: playerbase.h: No such file or directory
/usr/include/c++/15/bits/stl_vector.h:1130:7: note: candidate`;
  assert.deepEqual(links(log, paths), [
    ["bot.cpp:3:0", "./bot.cpp:3"],
    ["tanks.h:40:6", "./tanks.h:40:6"],
    ["bot.cpp:12:5", "./bot.cpp:12:5"],
    ["snake/snake_main.cpp:3:10", "snake/snake_main.cpp:3:10"],
  ]);
});

test("Python: a traceback's frames in the image's /bot/, not the library's", () => {
  const paths = ["snake.py", "snake_greedy.py"];
  const stderr = `Traceback (most recent call last):
  File "/bot/snake_greedy.py", line 145, in <module>
    snake.play(turn)
  File "/bot/snake.py", line 112, in play
    x, y = turn(state)
  File "/usr/local/lib/python3.14/json/__init__.py", line 346, in loads
  File "/bot/snake_greedy.py", line 121, in turn
    raise RuntimeError("boom")
RuntimeError: boom`;
  assert.deepEqual(links(stderr, paths), [
    ["snake_greedy.py:145:0", 'File "/bot/snake_greedy.py", line 145'],
    ["snake.py:112:0", 'File "/bot/snake.py", line 112'],
    ["snake_greedy.py:121:0", 'File "/bot/snake_greedy.py", line 121'],
  ]);
  // A crash's reason as the platform sums it up.
  assert.deepEqual(links('RuntimeError: boom (File "/bot/snake_greedy.py", line 24, in <module>)', paths), [["snake_greedy.py:24:0", 'File "/bot/snake_greedy.py", line 24']]);
});

test("Node.js: the error's first line and the stack's frames", () => {
  const paths = ["bot.js", "tanks.js"];
  const stderr = `/bot/bot.js:12
    const x = state.me.pos;
                       ^

TypeError: Cannot read properties of undefined (reading 'pos')
    at turn (/bot/bot.js:12:24)
    at Interface.<anonymous> (/bot/tanks.js:88:17)
    at /bot/bot.js:40:3
    at file:///bot/bot.js:41:9
    at node:internal/readline/interface:521:35
    at Interface.emit (node:events:518:28)`;
  assert.deepEqual(links(stderr, paths), [
    ["bot.js:12:0", "/bot/bot.js:12"],
    ["bot.js:12:24", "/bot/bot.js:12:24"],
    ["tanks.js:88:17", "/bot/tanks.js:88:17"],
    ["bot.js:40:3", "/bot/bot.js:40:3"],
    ["bot.js:41:9", "file:///bot/bot.js:41:9"],
  ]);
});

test("nothing that only looks like a place: times, other files, unknown names", () => {
  const paths = ["bot.py"];
  assert.deepEqual(links("turn 12:30:45 at 10.0.0.1:8080; other.py:3; /etc/bot.py:4; bot.pyc:5", paths), []);
});

test("segments: the text whole, its links marked", () => {
  const text = "x\n./bot.cpp:2:3: error: y\n";
  const parts = segments(text, ["bot.cpp"]);
  assert.equal(parts.map((p) => p.text).join(""), text);
  assert.deepEqual(parts, [{ text: "x\n" }, { text: "./bot.cpp:2:3", link: { path: "bot.cpp", line: 2, col: 3 } }, { text: ": error: y\n" }]);
});

test("draftPath: the draft's file, or none", () => {
  const paths = new Set(["bot.py", "lib/util.py"]);
  assert.equal(draftPath("/bot/lib/util.py", paths), "lib/util.py");
  assert.equal(draftPath("./lib/util.py", paths), "lib/util.py");
  assert.equal(draftPath("/tmp/src/./bot.py", paths), "bot.py");
  assert.equal(draftPath("/home/me/bot.py", paths), null);
  assert.equal(draftPath("util.py", paths), null);
});
