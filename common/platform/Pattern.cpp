#include "platform/Pattern.h"

#include <regex>

namespace rsb {

struct Pattern::Impl {
  std::regex re;
};

namespace {

PatternMatch Groups(const std::smatch& m) {
  PatternMatch out;
  for (const auto& g : m) {
    out.groups.push_back(g.str());
    out.matched.push_back(g.matched);
  }
  return out;
}

}  // namespace

Pattern::Pattern(const std::string& ecmascript) : impl_(new Impl{std::regex(ecmascript)}) {}

Pattern::~Pattern() = default;

std::optional<PatternMatch> Pattern::Search(const std::string& text) const {
  std::smatch m;
  if (!std::regex_search(text, m, impl_->re))
    return std::nullopt;
  return Groups(m);
}

std::optional<PatternMatch> Pattern::Match(const std::string& text) const {
  std::smatch m;
  if (!std::regex_match(text, m, impl_->re))
    return std::nullopt;
  return Groups(m);
}

std::vector<PatternMatch> Pattern::All(const std::string& text) const {
  std::vector<PatternMatch> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), impl_->re);
       it != std::sregex_iterator(); ++it)
    out.push_back(Groups(*it));
  return out;
}

std::string Pattern::Replace(const std::string& text, const std::string& format) const {
  return std::regex_replace(text, impl_->re, format);
}

}  // namespace rsb
