// Every chat template of /work/shared/templates rendered with Ferrite's engine
// against the goldens Jinja2 rendered (scripts/render_chat_templates.py),
// byte for byte; an error must carry Jinja2's message.
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ferrite/chat/chat_template.h"
#include "support/cli_invoke.h"

namespace ferrite {
namespace chat_golden_test {

namespace fs = std::filesystem;
using cli::test_support::read_file;

const fs::path kGoldens = fs::path(FERRITE_SOURCE_DIR) / "tests" / "chat" / "goldens";
const fs::path kTemplates = fs::path(FERRITE_SOURCE_DIR) / ".." / "shared" / "templates";

// Renders ("<template>:<case>/<gen|nogen>") known not to match Jinja2, with
// the reason. docs/chat-templates.md repeats this list.
const std::map<std::string, std::string> kKnownDifferences = {};

TEST(ChatGoldenTest, EveryTemplateAndCaseMatchesJinja2) {
  ASSERT_TRUE(fs::is_directory(kTemplates)) << kTemplates;
  auto cases = nlohmann::ordered_json::parse(read_file(kGoldens.parent_path() / "messages.json"));
  size_t templates = 0, renders = 0, matched = 0;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kGoldens)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    auto golden = nlohmann::ordered_json::parse(read_file(path));
    std::string name = golden["template"].get<std::string>();
    std::string source = read_file(kTemplates / name);
    ASSERT_FALSE(source.empty()) << name;
    ++templates;
    for (const auto& [key, expected] : golden["renders"].items()) {
      ++renders;
      std::string case_name = key.substr(0, key.find('/'));
      chat::ChatRenderOptions options;
      options.add_generation_prompt = key.substr(key.find('/') + 1) == "gen";
      options.bos_token = golden["bos_token"].get<std::string>();
      options.eos_token = golden["eos_token"].get<std::string>();
      options.date = golden["date"].get<std::string>();
      // A case is a message list, or {"messages": [...], more variables}.
      const auto& input = cases.at(case_name);
      nlohmann::ordered_json messages = input;
      if (input.is_object()) {
        messages = input["messages"];
        for (auto it = input.begin(); it != input.end(); ++it) {
          if (it.key() != "messages") options.extra[it.key()] = chat::Value::from_json(it.value());
        }
      }
      auto result = chat::render_chat_template(source, messages, options);
      std::string id = name + ":" + key;
      bool ok;
      std::string got = result ? *result : "error: " + result.error().message();
      if (expected.contains("output")) {
        ok = result && *result == expected["output"].get<std::string>();
      } else {
        const auto& fields = result ? std::map<std::string, std::string>{} : result.error().fields();
        auto message = fields.find("template_message");
        ok = !result && message != fields.end() && message->second == expected["error"].get<std::string>();
      }
      if (kKnownDifferences.count(id)) {
        EXPECT_FALSE(ok) << id << " is listed as a known difference but matches now";
        continue;
      }
      EXPECT_TRUE(ok) << id << "\n--- expected ---\n" << expected.dump() << "\n--- got ---\n" << got;
      if (ok) ++matched;
    }
  }
  EXPECT_EQ(templates, 70u);
  EXPECT_EQ(renders, templates * 2 * cases.size());
  std::cout << "[ chat goldens ] " << matched << " of " << renders << " renders (" << templates
            << " templates) match Jinja2 byte for byte\n";
}

}  // namespace chat_golden_test
}  // namespace ferrite
