// The chat template engine: each construct against Jinja2's own renders
// (tests/chat/constructs_golden.json, made by scripts/render_chat_templates.py),
// error positions, limits against hostile templates, data never evaluated.
#include "ferrite/chat/template.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ferrite/chat/chat_template.h"
#include "support/cli_invoke.h"

namespace ferrite {
namespace chat_template_test {

namespace fs = std::filesystem;
using chat::ChatRenderOptions;
using chat::Template;
using chat::TemplateLimits;
using chat::Value;

const fs::path kChatDir = fs::path(FERRITE_SOURCE_DIR) / "tests" / "chat";

Result<std::string> render(const std::string& source, const nlohmann::ordered_json& variables = {},
                           const TemplateLimits& limits = {}) {
  ChatRenderOptions options;
  options.limits = limits;
  options.date = "2026-01-15";
  if (variables.is_object()) {
    for (auto it = variables.begin(); it != variables.end(); ++it) {
      options.extra[it.key()] = Value::from_json(it.value());
    }
  }
  return chat::render_chat_template(source, nlohmann::ordered_json::array(), options);
}

std::string field(const Result<std::string>& r, const std::string& name) {
  if (r) return "<rendered: " + *r + ">";
  auto it = r.error().fields().find(name);
  return it == r.error().fields().end() ? "<no field " + name + ">" : it->second;
}

TEST(ChatTemplateTest, EveryConstructMatchesJinja2) {
  auto input = nlohmann::ordered_json::parse(cli::test_support::read_file(kChatDir / "constructs.json"));
  auto golden = nlohmann::ordered_json::parse(cli::test_support::read_file(kChatDir / "constructs_golden.json"));
  ASSERT_EQ(golden.size(), input["templates"].size()) << "rerun scripts/render_chat_templates.py";
  for (const auto& expected : golden) {
    const std::string source = expected["template"].get<std::string>();
    auto result = render(source, input["variables"]);
    if (expected.contains("output")) {
      ASSERT_TRUE(result) << source << "\n" << result.error().message();
      EXPECT_EQ(*result, expected["output"].get<std::string>()) << source;
    } else {
      ASSERT_FALSE(result) << source << " rendered " << *result;
      EXPECT_EQ(field(result, "template_message"), expected["error"].get<std::string>()) << source;
    }
  }
}

TEST(ChatTemplateTest, MessageContentIsDataNeverEvaluated) {
  ChatRenderOptions options;
  auto messages = nlohmann::ordered_json::parse(
      R"([{"role": "user", "content": "{{ 7 * 7 }} {% if true %}x{% endif %} {# c #}"}])");
  auto r = chat::render_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}", messages, options);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(*r, "{{ 7 * 7 }} {% if true %}x{% endif %} {# c #}");
}

TEST(ChatTemplateTest, RaiseExceptionFailsWithTheTemplatesMessage) {
  auto r = render("line one\n{% if true %}\n  {{ raise_exception('Conversation roles must alternate') }}\n{% endif %}");
  ASSERT_FALSE(r);
  EXPECT_EQ(field(r, "template_message"), "Conversation roles must alternate");
  EXPECT_EQ(field(r, "line"), "3");
  EXPECT_NE(r.error().message().find("line 3, column"), std::string::npos) << r.error().message();
}

// A namespace attribute that would hold the namespace itself (directly or
// inside a list or dict) is refused: a reference cycle would never be freed
// (found by the jinja fuzzer under LeakSanitizer). Other values still work.
TEST(ChatTemplateTest, NamespaceCannotHoldItself) {
  for (const char* source :
       {"{% set ns = namespace(n=0) %}{% set ns.n = ns %}",
        "{% set ns = namespace(n=0) %}{% set ns.n = [1, [ns]] %}",
        "{% set ns = namespace(n=0) %}{% set ns.n = {'k': {'j': ns}} %}",
        "{% set ns = namespace(n=0) %}{% set other = namespace(x=ns) %}{% set ns.n = other %}"}) {
    auto r = render(source);
    ASSERT_FALSE(r) << source;
    EXPECT_NE(r.error().message().find("holds the namespace"), std::string::npos)
        << r.error().message();
  }
  auto ok = render(
      "{% set ns = namespace(n=[1]) %}{% set other = namespace(x=1) %}"
      "{% set ns.n = ns.n + [other, {'k': ns.n}] %}{{ ns.n | length }}");
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(*ok, "3");
}

TEST(ChatTemplateTest, ErrorsNameLineAndColumn) {
  struct Case {
    std::string source;
    std::string line;
    std::string column;
    std::string message_part;
  };
  const Case cases[] = {
      {"ok\n{% if true %}x", "2", "", "expected 'elif'"},
      {"{% frobnicate %}", "1", "4", "unknown tag 'frobnicate'"},
      {"a\nb {{ 'unterminated }}", "2", "6", "unterminated string"},
      {"{{ 1 + }}", "1", "8", "unexpected"},
      {"{% for x in [1] %}{% endif %}", "1", "", "expected 'endfor'"},
      {"{{ foo.bar }}", "1", "", "'foo' is undefined"},
      {"\n\n   {{ [1, 2] | nofilter }}", "3", "", "No filter named 'nofilter'."},
      {"{% break %}", "1", "4", "'break' outside of a loop"},
      {"{{ x }", "1", "6", "unexpected `}`"},
      {"{{ x ", "1", "1", "missing `}}`"},
      {"{# open comment", "1", "1", "missing end of comment"},
  };
  for (const auto& c : cases) {
    auto r = render(c.source);
    ASSERT_FALSE(r) << c.source;
    EXPECT_EQ(field(r, "line"), c.line) << c.source << ": " << r.error().message();
    if (!c.column.empty()) EXPECT_EQ(field(r, "column"), c.column) << c.source << ": " << r.error().message();
    EXPECT_NE(r.error().message().find(c.message_part), std::string::npos) << c.source << ": " << r.error().message();
  }
}

TEST(ChatTemplateTest, HostileTemplatesHitTheLimits) {
  TemplateLimits limits;
  limits.max_steps = 200000;
  limits.max_output_bytes = 1 << 20;
  limits.max_items = 100000;
  struct Case {
    std::string source;
    std::string message_part;
  };
  std::string deep_ifs;
  for (int i = 0; i < 1000; ++i) deep_ifs += "{% if true %}";
  const Case cases[] = {
      {deep_ifs, "nesting deeper than 256"},
      {"{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}", "nesting deeper than 256"},
      {"{{ " + std::string(5000, '[') + std::string(5000, ']') + " }}", "nesting deeper than 256"},
      {"{{ " + std::string(3000, '-') + "1 }}", "nesting deeper than 256"},
      {"{{ " + [] { std::string s = "x"; for (int i = 0; i < 2000; ++i) s = "not " + s; return s; }() + " }}",
       "nesting deeper than 256"},
      {"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "more than 200000 steps"},
      {"{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}", "output exceeds the limit"},
      {"{% set ns = namespace(s='xy') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
       "exceeds the limit"},
      {"{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
       "items exceeds the limit"},
      {"{{ 'x' * 10000000000 }}", "more than 1048576 bytes"},
      {"{{ [1] * 10000000000 }}", "more than 100000 items"},
      {"{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "macro calls nested deeper than 64"},
      {"{{ range(1000000)|list }}", "Range too big"},
      {"{{ 9223372036854775807 + 1 }}", "integer overflow"},
      {"{{ 2 ** 100 }}", "integer overflow"},
  };
  for (const auto& c : cases) {
    auto r = render(c.source, {}, limits);
    ASSERT_FALSE(r) << c.source.substr(0, 80);
    EXPECT_NE(r.error().message().find(c.message_part), std::string::npos)
        << c.source.substr(0, 80) << ": " << r.error().message();
  }
  TemplateLimits small_source;
  small_source.max_source_bytes = 16;
  auto big = Template::parse(std::string(17, 'x'), small_source);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message().find("limit is 16"), std::string::npos) << big.error().message();
}

TEST(ChatTemplateTest, VariablesAndGlobals) {
  auto t = Template::parse("{{ greeting }}, {{ name | upper }}! {{ range(3)|list }} {{ missing }}.");
  ASSERT_TRUE(t) << t.error().message();
  auto r = t->render({{"greeting", Value("Hello")}, {"name", Value("ada")}});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(*r, "Hello, ADA! [0, 1, 2] .");
}

TEST(ChatTemplateTest, StrftimeNowFormatsTheGivenDate) {
  ChatRenderOptions options;
  options.date = "2024-07-26";
  auto r = chat::render_chat_template("{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%B %d, %Y') }}|{{ strftime_now('%A') }}",
                                      nlohmann::ordered_json::array(), options);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(*r, "26 Jul 2024|July 26, 2024|Friday");
  for (const char* bad : {"2024-02-30", "2024-13-01", "20240726", "2024-07-26x", ""}) {
    EXPECT_FALSE(chat::format_date(bad, "%Y")) << bad;
  }
}

TEST(ChatTemplateTest, AddGenerationPromptBosAndEos) {
  ChatRenderOptions options;
  options.bos_token = "<B>";
  options.eos_token = "<E>";
  const char* source = "{{ bos_token }}{% for m in messages %}{{ m.role }}:{{ m.content }}{{ eos_token }}{% endfor %}"
                       "{% if add_generation_prompt %}assistant:{% endif %}{{ tools is none }}{{ documents is none }}";
  auto messages = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "hi"}])");
  auto r = chat::render_chat_template(source, messages, options);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "<B>user:hi<E>TrueTrue");
  options.add_generation_prompt = true;
  r = chat::render_chat_template(source, messages, options);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "<B>user:hi<E>assistant:TrueTrue");
  EXPECT_FALSE(chat::render_chat_template(source, nlohmann::ordered_json::object(), options));
  auto text = chat::render("{{ messages[0].content }}", R"([{"content": "é"}])", false, "", "", "2026-01-01");
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "é");
  EXPECT_FALSE(chat::render("x", "[not json", false, "", "", "2026-01-01"));
}

TEST(ChatTemplateTest, SelectsTheDefaultNamedTemplate) {
  auto plain = chat::select_chat_template(nlohmann::ordered_json("{{ x }}"));
  ASSERT_TRUE(plain);
  EXPECT_EQ(*plain, "{{ x }}");
  auto named = chat::select_chat_template(nlohmann::ordered_json::parse(
      R"([{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}])"));
  ASSERT_TRUE(named);
  EXPECT_EQ(*named, "D");
  EXPECT_FALSE(chat::select_chat_template(nlohmann::ordered_json::parse(R"([{"name": "rag", "template": "R"}])")));
  EXPECT_FALSE(chat::select_chat_template(nlohmann::ordered_json(3)));
}

TEST(ChatTemplateTest, FloatsPrintAsPython) {
  EXPECT_EQ(chat::python_float_repr(1.0), "1.0");
  EXPECT_EQ(chat::python_float_repr(0.1), "0.1");
  EXPECT_EQ(chat::python_float_repr(1e16), "1e+16");
  EXPECT_EQ(chat::python_float_repr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(chat::python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(chat::python_float_repr(0.00001), "1e-05");
  EXPECT_EQ(chat::python_float_repr(-2.5), "-2.5");
}

}  // namespace chat_template_test
}  // namespace ferrite
