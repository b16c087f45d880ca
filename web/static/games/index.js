// One renderer per game: draw(canvas, frame, context) paints a frame, where
// context has ids (the bots' ids by seat), frames, index and match.
import { tanks } from "./tanks.js";
import { snake } from "./snake.js";
import { pacman } from "./pacman.js";
import { logic } from "./logic.js";

export const renderers = { tanks, snake, pacman };

// rendererFor is a game's renderer: a built-in game's own, or the generic
// view of a game whose rules are a logic (any other name).
export const rendererFor = (game) => renderers[game] || (game ? logic : null);
