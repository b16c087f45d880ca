// Draws a tic-tac-toe frame: the board the logic sent the bot to move
// (the round's messages), X for seat 0, O for seat 1.
const marks = ["X", "O"];
const colours = ["#e11d48", "#2563eb"];

function boardOf(frame) {
  const msgs = (frame && frame.state && frame.state.messages) || [];
  for (const m of msgs) {
    try {
      const ask = JSON.parse(m.content);
      if (Array.isArray(ask.board)) return { board: ask.board, next: ask.you };
    } catch (e) {
      // not a board
    }
  }
  return null;
}

// The final position of a game, when the logic showed it to spectators
// (its watch message at a game's end): the last frame's.
function finalOf(frame) {
  const watch = (frame && frame.state && frame.state.watch) || [];
  for (let i = watch.length - 1; i >= 0; i--) {
    try {
      const end = JSON.parse(watch[i]);
      if (Array.isArray(end.board)) return end;
    } catch (e) {
      // not a position
    }
  }
  return null;
}

function draw(msg) {
  const ask = boardOf(msg.frame);
  const end = ask ? null : finalOf(msg.frame);
  const shown = ask || end;
  const caption = document.getElementById("caption");
  const g = document.getElementById("board").getContext("2d");
  g.clearRect(0, 0, 300, 300);
  g.strokeStyle = "#374151";
  g.lineWidth = 3;
  for (let i = 1; i < 3; i++) {
    g.beginPath(); g.moveTo(i * 100, 5); g.lineTo(i * 100, 295); g.stroke();
    g.beginPath(); g.moveTo(5, i * 100); g.lineTo(295, i * 100); g.stroke();
  }
  g.font = "bold 64px sans-serif";
  g.textAlign = "center";
  g.textBaseline = "middle";
  (shown ? shown.board : []).forEach((row, r) => row.forEach((cell, c) => {
    if (cell < 0) return;
    g.fillStyle = colours[cell];
    g.fillText(marks[cell], c * 100 + 50, r * 100 + 54);
  }));
  const round = msg.frame ? msg.frame.turn : 0;
  const who = (seat) => (msg.ids && msg.ids[seat]) || `seat ${seat}`;
  if (ask) {
    caption.textContent = `Round ${round}: ${marks[ask.next]} to move (${who(ask.next)})`;
  } else if (!end) {
    caption.textContent = `Round ${round}: the match is over`;
  } else if (end.winner === null || end.winner === undefined) {
    caption.textContent = `Round ${round}: the match is over, the last game drawn`;
  } else {
    const why = end.fault ? `, the other's fault: ${end.fault}` : "";
    caption.textContent = `Round ${round}: the match is over, ${marks[end.winner]} won (${who(end.winner)}${why})`;
  }
  // A person asked for a move is told so until they move.
  if (asked) caption.textContent = yourMove(asked);
  parent.postMessage({ type: "arena:label", text: "Tic-tac-toe, " + caption.textContent }, "*");
}

function yourMove(ask) {
  return `Your move (${marks[ask.seat] || "seat " + ask.seat}): click an empty cell`;
}

// A person playing a seat: the page tells the player each question
// ({type: "arena:ask", turn, input, seat}) once the player says it takes
// input ({type: "arena:input"}); a click on an empty cell answers it as
// the kit's bot would ({type: "arena:move", answer: "ROW COL"}).
let asked = null;
let declared = false;

window.addEventListener("message", (e) => {
  if (!e.data) return;
  if (e.data.type === "arena:frame") {
    draw(e.data);
    // Said once the page talks to the player: it takes input.
    if (!declared) parent.postMessage({ type: "arena:input" }, "*");
    declared = true;
  }
  if (e.data.type === "arena:ask") {
    asked = e.data;
    const caption = document.getElementById("caption");
    caption.textContent = yourMove(asked);
    parent.postMessage({ type: "arena:label", text: "Tic-tac-toe, " + caption.textContent }, "*");
  }
});

document.getElementById("board").addEventListener("click", (e) => {
  if (!asked) return;
  const r = e.target.getBoundingClientRect();
  const row = Math.floor(((e.clientY - r.top) / r.height) * 3);
  const col = Math.floor(((e.clientX - r.left) / r.width) * 3);
  asked = null;
  parent.postMessage({ type: "arena:move", answer: `${row} ${col}` }, "*");
});

