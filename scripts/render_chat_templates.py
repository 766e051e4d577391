#!/usr/bin/python3
"""Renders every chat template in /work/shared/templates (or --templates DIR)
with Jinja2 set up the way Hugging Face transformers sets up chat templates,
and writes the reference renders (goldens) that tests/chat/chat_golden_test.cc
compares Ferrite's own engine against, byte for byte.

Run with Debian's Python, which has python3-jinja2:
  /usr/bin/python3 scripts/render_chat_templates.py            # rewrite goldens
  /usr/bin/python3 scripts/render_chat_templates.py --check    # compare only

The Jinja2 setup (as transformers documents it for apply_chat_template):
  * jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True,
    lstrip_blocks=True) with the jinja2.ext.loopcontrols extension and a
    `{% generation %}...{% endgeneration %}` block tag that renders its body;
  * filter `tojson(x, ensure_ascii=False, indent=None, separators=None,
    sort_keys=False)` = json.dumps with those arguments (no ASCII escaping,
    key order kept);
  * globals `raise_exception(message)` (raises a TemplateError with the
    message) and `strftime_now(format)` (here: a fixed date, FIXED_DATE);
  * render variables: messages, tools=None, documents=None (a case may give
    tools), add_generation_prompt, bos_token, eos_token.

Inputs: tests/chat/messages.json (named cases: a message list, or an object
with "messages" and more variables such as "tools"). Each template is
rendered for every case with add_generation_prompt false and true.
Output: tests/chat/goldens/<template name without .jinja>.json:
  {"template": "...", "bos_token": "...", "eos_token": "...", "date": "...",
   "renders": {"<case>/<gen|nogen>": {"output": "..."} |
                                     {"error": "...", "error_kind": "..."}}}
error_kind is "raise_exception" for the template's own raise_exception call,
otherwise the Python exception class name.

It also renders tests/chat/constructs.json (one template per engine construct
over fixed variables) into tests/chat/constructs_golden.json, which
tests/chat/template_test.cc checks.
"""
import argparse
import datetime
import json
import os
import sys

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXED_DATE = datetime.datetime(2026, 1, 15)

# bos/eos text per template family (file name prefix); default <s> / </s>.
TOKENS = [
    ("meta-llama-Llama-3", "<|begin_of_text|>", "<|eot_id|>"),
    ("deepseek-ai-DeepSeek-R1-Distill-Llama", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    ("deepseek-ai", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    ("llama-cpp-deepseek-r1", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    ("fireworks-ai-llama-3", "<|begin_of_text|>", "<|eot_id|>"),
    ("NousResearch-Hermes", "<|begin_of_text|>", "<|im_end|>"),
    ("Qwen", "", "<|im_end|>"),
    ("google-gemma", "<bos>", "<eos>"),
    ("CohereForAI", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
    ("Cohere2", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
    ("microsoft-Phi", "<s>", "<|endoftext|>"),
    ("ibm-granite", "<|end_of_text|>", "<|end_of_text|>"),
    ("openai-gpt-oss", "<|startoftext|>", "<|return|>"),
]


class TransformersError(Exception):
    pass


class GenerationTag(jinja2.ext.Extension):
    """`{% generation %}body{% endgeneration %}` renders body (transformers
    uses it to mark assistant tokens; the text is unchanged)."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def make_environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: FIXED_DATE.strftime(fmt)
    return env


def tokens_for(name):
    for prefix, bos, eos in TOKENS:
        if name.startswith(prefix):
            return bos, eos
    return "<s>", "</s>"


def render_one(env, source, case, gen, bos, eos):
    # A case is a message list, or {"messages": [...], other variables...}.
    variables = {"tools": None, "documents": None}
    if isinstance(case, dict):
        variables.update({k: v for k, v in case.items() if k != "messages"})
        messages = case["messages"]
    else:
        messages = case
    try:
        template = env.from_string(source)
        text = template.render(messages=messages, **variables,
                               add_generation_prompt=gen, bos_token=bos, eos_token=eos)
        return {"output": text}
    except jinja2.exceptions.TemplateError as e:
        kind = type(e).__name__
        if kind == "TemplateError":
            kind = "raise_exception"
        return {"error": str(e), "error_kind": kind}
    except Exception as e:  # noqa: BLE001 - a template may fail in Python itself
        return {"error": str(e), "error_kind": type(e).__name__}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--templates", default=os.path.join(ROOT, "..", "shared", "templates"))
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "chat", "goldens"))
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args()
    with open(os.path.join(ROOT, "tests", "chat", "messages.json"), encoding="utf-8") as f:
        cases = json.load(f)
    env = make_environment()
    names = sorted(n for n in os.listdir(args.templates) if n.endswith(".jinja"))
    stale = 0
    for file_name in names:
        name = file_name[:-len(".jinja")]
        with open(os.path.join(args.templates, file_name), encoding="utf-8") as f:
            source = f.read()
        bos, eos = tokens_for(name)
        renders = {}
        for case, messages in cases.items():
            for gen in (False, True):
                key = f"{case}/{'gen' if gen else 'nogen'}"
                renders[key] = render_one(env, source, messages, gen, bos, eos)
        golden = {"template": file_name, "bos_token": bos, "eos_token": eos,
                  "date": FIXED_DATE.strftime("%Y-%m-%d"), "renders": renders}
        text = json.dumps(golden, ensure_ascii=False, indent=1) + "\n"
        path = os.path.join(args.out, name + ".json")
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:
            stale += 1
            if args.check:
                print(f"stale: {path}")
            else:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    with open(os.path.join(ROOT, "tests", "chat", "constructs.json"), encoding="utf-8") as f:
        constructs = json.load(f)
    results = []
    for source in constructs["templates"]:
        try:
            text = env.from_string(source).render(**constructs["variables"])
            results.append({"template": source, "output": text})
        except Exception as e:  # noqa: BLE001
            results.append({"template": source, "error": str(e)})
    text = json.dumps(results, ensure_ascii=False, indent=1) + "\n"
    path = os.path.join(ROOT, "tests", "chat", "constructs_golden.json")
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
    if old != text:
        stale += 1
        if args.check:
            print(f"stale: {path}")
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    print(f"{len(names)} templates x {2 * len(cases)} renders; {stale} golden file(s) "
          f"{'differ' if args.check else 'written'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
