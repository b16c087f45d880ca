// Show what the bot is thinking: shapes the viewer draws over the board
// for the turn, in the game's coordinates (Tanks: x, y; Snake and
// Pac-Man: row, column). Add shapes while deciding, then call
// draw::flush() once before answering: it writes one line to stderr,
//
//   #arena {"draw":[{"circle":[3,4],"text":"me"},{"line":[[3,4],[7,4]],"color":"#e33"}]}
//
// which the replay keeps with the turn's stderr. An empty color is the
// bot's own; a text is at most 40 characters.
#pragma once

#include <iostream>
#include <sstream>
#include <string>

namespace draw {

inline std::ostringstream& shapes() {
    static std::ostringstream s;
    return s;
}

// quoted is s as a JSON string.
inline std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) continue;
        out += c;
    }
    return out + "\"";
}

inline void add(const std::string& shape, const std::string& color, const std::string& text) {
    std::ostringstream& s = shapes();
    if (s.tellp() > 0) s << ",";
    s << "{" << shape;
    if (!color.empty()) s << ",\"color\":" << quoted(color);
    if (!text.empty()) s << ",\"text\":" << quoted(text);
    s << "}";
}

// circle rings the cell x, y.
inline void circle(int x, int y, const std::string& color = "", const std::string& text = "") {
    add("\"circle\":[" + std::to_string(x) + "," + std::to_string(y) + "]", color, text);
}

// line joins the centres of cells (x1, y1) and (x2, y2).
inline void line(int x1, int y1, int x2, int y2, const std::string& color = "", const std::string& text = "") {
    add("\"line\":[[" + std::to_string(x1) + "," + std::to_string(y1) + "],[" + std::to_string(x2) + "," + std::to_string(y2) + "]]", color, text);
}

// cell shades the cell x, y.
inline void cell(int x, int y, const std::string& color = "", const std::string& text = "") {
    add("\"cell\":[" + std::to_string(x) + "," + std::to_string(y) + "]", color, text);
}

// text writes words at the cell x, y.
inline void text(int x, int y, const std::string& words, const std::string& color = "") {
    add("\"at\":[" + std::to_string(x) + "," + std::to_string(y) + "]", color, words);
}

// flush writes this turn's shapes (none: nothing) and starts the next
// turn's.
inline void flush() {
    std::ostringstream& s = shapes();
    if (s.tellp() > 0) std::cerr << "#arena {\"draw\":[" << s.str() << "]}" << std::endl;
    s.str("");
    s.clear();
}

}  // namespace draw
