// One renderer per game: draw(canvas, frame, context) paints a frame, where
// context has ids (the bots' ids by seat), frames, index and match.
import { tanks } from "./tanks.js";
import { snake } from "./snake.js";
import { pacman } from "./pacman.js";

export const renderers = { tanks, snake, pacman };
