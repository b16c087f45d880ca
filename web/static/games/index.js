// One renderer per game: draw(canvas, frame, context) paints a frame, where
// context has ids (the bots' ids by seat), frames, index and match.
import { tanks } from "./tanks.js";

export const renderers = { tanks };
