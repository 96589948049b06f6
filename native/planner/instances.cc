#include "instances.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace wh::planner {

namespace {

bool slurp(const std::string& path, std::string& out, std::string& error) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = "cannot open " + path;
    return false;
  }
  char buf[1 << 16];
  size_t n;
  out.clear();
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return true;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find('\n', i);
    if (j == std::string::npos) j = text.size();
    std::string l = text.substr(i, j - i);
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ' || l.back() == '\t')) l.pop_back();
    out.push_back(std::move(l));
    i = j + 1;
  }
  return out;
}

std::string dirOf(const std::string& path) {
  const size_t s = path.rfind('/');
  return s == std::string::npos ? std::string(".") : path.substr(0, s);
}

// The value of "key" in a flat JSON object, as raw text (strings without quotes).
bool jsonField(const std::string& json, const char* key, std::string& value) {
  const std::string k = std::string("\"") + key + "\"";
  size_t p = json.find(k);
  if (p == std::string::npos) return false;
  p = json.find(':', p + k.size());
  if (p == std::string::npos) return false;
  ++p;
  while (p < json.size() && (json[p] == ' ' || json[p] == '\t' || json[p] == '\n' || json[p] == '\r')) ++p;
  if (p < json.size() && json[p] == '"') {
    const size_t e = json.find('"', p + 1);
    if (e == std::string::npos) return false;
    value = json.substr(p + 1, e - p - 1);
    return true;
  }
  size_t e = p;
  while (e < json.size() && json[e] != ',' && json[e] != '}' && json[e] != '\n') ++e;
  value = json.substr(p, e - p);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\r')) value.pop_back();
  return true;
}

// Data lines of a LoRR agents/tasks file: '#' comments skipped, the first is the count.
bool countedLines(const std::string& path, std::vector<std::string>& out, std::string& error) {
  std::string text;
  if (!slurp(path, text, error)) return false;
  out.clear();
  bool counted = false;
  long count = 0;
  for (std::string& l : lines(text)) {
    if (l.empty() || l[0] == '#') continue;
    if (!counted) {
      count = std::strtol(l.c_str(), nullptr, 10);
      counted = true;
      continue;
    }
    out.push_back(std::move(l));
  }
  if (!counted || count < 0 || static_cast<size_t>(count) > out.size()) {
    error = path + ": the count line does not match the lines that follow";
    return false;
  }
  out.resize(static_cast<size_t>(count));
  return true;
}

}  // namespace

bool readMap(const std::string& path, Grid& grid, std::string& error) {
  std::string text;
  if (!slurp(path, text, error)) return false;
  const std::vector<std::string> ls = lines(text);
  int32_t w = -1, h = -1;
  size_t row0 = 0;
  for (size_t i = 0; i < ls.size(); ++i) {
    if (ls[i].rfind("height", 0) == 0) h = static_cast<int32_t>(std::strtol(ls[i].c_str() + 6, nullptr, 10));
    if (ls[i].rfind("width", 0) == 0) w = static_cast<int32_t>(std::strtol(ls[i].c_str() + 5, nullptr, 10));
    if (ls[i] == "map") {
      row0 = i + 1;
      break;
    }
  }
  if (w <= 0 || h <= 0 || row0 == 0 || ls.size() < row0 + static_cast<size_t>(h)) {
    error = path + ": not a map (height, width, map header and rows)";
    return false;
  }
  grid.width = w;
  grid.height = h;
  grid.flags.assign(static_cast<size_t>(w) * static_cast<size_t>(h), 0);
  for (int32_t r = 0; r < h; ++r) {
    const std::string& l = ls[row0 + static_cast<size_t>(r)];
    if (static_cast<int32_t>(l.size()) < w) {
      error = path + ": row " + std::to_string(r) + " is short";
      return false;
    }
    for (int32_t c = 0; c < w; ++c) {
      const char ch = l[static_cast<size_t>(c)];
      if (ch == '@' || ch == 'T' || ch == 'O' || ch == 'W') grid.flags[static_cast<size_t>(r * w + c)] = kBlocked;
    }
  }
  return true;
}

bool readScen(const std::string& path, const Grid& grid, size_t limit, std::vector<ScenAgent>& agents, std::string& error) {
  std::string text;
  if (!slurp(path, text, error)) return false;
  agents.clear();
  for (const std::string& l : lines(text)) {
    if (l.empty() || l.rfind("version", 0) == 0) continue;
    // bucket map w h sx sy gx gy len (tab separated; the map path may hold spaces)
    std::vector<std::string> f;
    size_t i = 0;
    while (i <= l.size()) {
      size_t j = l.find('\t', i);
      if (j == std::string::npos) j = l.size();
      f.push_back(l.substr(i, j - i));
      i = j + 1;
    }
    if (f.size() < 8) {
      error = path + ": a line with fewer than 8 tab-separated fields";
      return false;
    }
    const int32_t sx = std::atoi(f[4].c_str()), sy = std::atoi(f[5].c_str());
    const int32_t gx = std::atoi(f[6].c_str()), gy = std::atoi(f[7].c_str());
    if (!grid.inside(sx, sy) || !grid.inside(gx, gy)) {
      error = path + ": an agent off the map";
      return false;
    }
    agents.push_back({sy * grid.width + sx, gy * grid.width + gx});
    if (limit && agents.size() >= limit) break;
  }
  if (limit && agents.size() < limit) {
    error = path + ": only " + std::to_string(agents.size()) + " agents";
    return false;
  }
  return true;
}

bool readLorr(const std::string& jsonPath, LorrInstance& inst, std::string& error) {
  std::string json;
  if (!slurp(jsonPath, json, error)) return false;
  const size_t slash = jsonPath.rfind('/');
  inst.name = slash == std::string::npos ? jsonPath : jsonPath.substr(slash + 1);
  std::string mapFile, agentFile, taskFile, team, reveal, version;
  if (!jsonField(json, "mapFile", mapFile) || !jsonField(json, "agentFile", agentFile) ||
      !jsonField(json, "taskFile", taskFile) || !jsonField(json, "teamSize", team)) {
    error = jsonPath + ": mapFile, agentFile, taskFile and teamSize are needed";
    return false;
  }
  inst.teamSize = std::atoi(team.c_str());
  if (jsonField(json, "numTasksReveal", reveal)) inst.numTasksReveal = std::atof(reveal.c_str());
  inst.v2024 = jsonField(json, "version", version) && version.find("2024") != std::string::npos;
  const std::string dir = dirOf(jsonPath);
  if (!readMap(dir + "/" + mapFile, inst.grid, error)) return false;
  std::vector<std::string> ls;
  if (!countedLines(dir + "/" + agentFile, ls, error)) return false;
  if (inst.teamSize <= 0 || static_cast<size_t>(inst.teamSize) > ls.size()) {
    error = jsonPath + ": teamSize exceeds the agent file";
    return false;
  }
  const int32_t cells = inst.grid.width * inst.grid.height;
  inst.starts.clear();
  for (int32_t i = 0; i < inst.teamSize; ++i) {
    const long c = std::strtol(ls[static_cast<size_t>(i)].c_str(), nullptr, 10);
    if (c < 0 || c >= cells || (inst.grid.flags[static_cast<size_t>(c)] & kBlocked)) {
      error = jsonPath + ": agent " + std::to_string(i) + " starts off the free cells";
      return false;
    }
    inst.starts.push_back(static_cast<Cell>(c));
  }
  if (!countedLines(dir + "/" + taskFile, ls, error)) return false;
  inst.tasks.clear();
  inst.tasks.reserve(ls.size());
  for (const std::string& l : ls) {
    std::vector<Cell> errands;
    const char* p = l.c_str();
    while (*p) {
      char* end;
      const long c = std::strtol(p, &end, 10);
      if (end == p) break;
      if (c < 0 || c >= cells || (inst.grid.flags[static_cast<size_t>(c)] & kBlocked)) {
        error = jsonPath + ": task " + std::to_string(inst.tasks.size()) + " has an errand off the free cells";
        return false;
      }
      errands.push_back(static_cast<Cell>(c));
      p = end;
      while (*p == ',' || *p == ' ') ++p;
    }
    if (errands.empty()) {
      error = jsonPath + ": an empty task line";
      return false;
    }
    inst.tasks.push_back(std::move(errands));
  }
  if (inst.tasks.empty()) {
    error = jsonPath + ": no tasks";
    return false;
  }
  return true;
}

}  // namespace wh::planner
