"""Show what the bot is thinking: shapes the viewer draws over the board
for the turn, in the game's coordinates (Tanks: x, y; Snake and Pac-Man:
row, column). Add shapes while deciding, then call draw.flush() once
before answering: it writes one line to stderr,

    #arena {"draw":[{"circle":[3,4],"text":"me"},{"line":[[3,4],[7,4]],"color":"#e33"}]}

which the replay keeps with the turn's stderr. No color: the bot's own; a
text is at most 40 characters.
"""

import json
import sys

_items = []


def _add(item, color=None, text=None):
    if color:
        item["color"] = color
    if text:
        item["text"] = str(text)
    _items.append(item)


def circle(x, y, color=None, text=None):
    """Ring the cell x, y."""
    _add({"circle": [x, y]}, color, text)


def line(a, b, color=None, text=None):
    """Join the centres of cells a and b, each (x, y)."""
    _add({"line": [list(a), list(b)]}, color, text)


def cell(x, y, color=None, text=None):
    """Shade the cell x, y."""
    _add({"cell": [x, y]}, color, text)


def text(x, y, words, color=None):
    """Write words at the cell x, y."""
    _add({"at": [x, y]}, color, words)


def flush():
    """Write this turn's shapes (none: nothing) and start the next turn's."""
    global _items
    if _items:
        print("#arena " + json.dumps({"draw": _items}, separators=(",", ":")), file=sys.stderr, flush=True)
    _items = []
