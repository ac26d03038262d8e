#pragma once

// core/util: what every layer uses. Strings (here), files written
// atomically, child processes, temporary folders, pickle reading and
// writing. Includes nothing else of StepScope.

#include <string>
#include <string_view>
#include <vector>

namespace stepscope {

// "a, b, c": how messages list the allowed values.
std::string joinNames(const std::vector<std::string>& names);

// Whether `text` starts with `prefix`, ends with `suffix`, holds `part`.
bool startsWith(std::string_view text, std::string_view prefix);
bool endsWith(std::string_view text, std::string_view suffix);
bool contains(std::string_view text, std::string_view part);

// "1.50 GiB": bytes in the largest binary unit that keeps the number at 1 or more.
std::string formatBytes(double bytes);

// "3.14" for (3.14159, 2): a number with a fixed count of decimals, as tables print it.
std::string fixedDecimals(double value, int decimals = 2);

// One CSV cell: quoted (quotes doubled) when it holds a comma, quote or newline.
std::string csvField(const std::string& text);

// One word for a POSIX shell: as it is when it holds no character the
// shell reads, else in single quotes, each ' written as '\''.
std::string shellQuote(const std::string& text);

// True for a name a script may hold as it is, outside quotes and in
// comments: one or more of [A-Za-z0-9._-].
bool isPlainName(const std::string& text);

// `text` with control characters written as \n, \x1b…: fit to quote in a
// one-line message.
std::string printableText(const std::string& text);

}  // namespace stepscope
