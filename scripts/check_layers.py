#!/usr/bin/env python3
"""Checks every #include in src/ and include/ against the stage graph.

The graph is read from the `ferrite_stage(TARGET SOURCES dir [HEADERS dir]
[DEPS ...] [EXTERNAL ...])`, `ferrite_family/ferrite_provider(NAME [DEPS ...])` and
`ferrite_builtin_families/providers()` calls in src/**/CMakeLists.txt (the same calls
that build the stage libraries, cmake/FerriteStages.cmake). A file belongs to
the stage whose SOURCES folder (src/<dir>) or HEADERS folder (include/<dir>)
holds it; the CLI (src/cli) sits on top and may include any stage. An include
is allowed when the header it names belongs to
  * the including file's own stage (public or private header), or
  * a stage the including stage depends on, directly or transitively
    (public headers only: include/<HEADERS>/..., or a room's own folder for a
    stage without HEADERS).
Anything else (an upward or sideways include, another stage's private
header, a header no stage owns) is printed as `file:line: ...` and the script
exits 1. It also rejects a graph with a cycle or an unknown dependency.

Usage: python3 scripts/check_layers.py [--root DIR] [--graph]
  --graph   print the stage graph (one line per stage, deps in build order)
"""
import argparse
import os
import re
import sys

STAGE_CALL = re.compile(
    r"(ferrite_stage|ferrite_family|ferrite_provider|ferrite_builtin_families|ferrite_builtin_providers)"
    r"\(([^)]*)\)", re.S)
# The other stage-declaring functions of cmake/FerriteStages.cmake.
# Rooms: function → (room kind, stage prefix, folder under src/, implicit deps).
ROOM_FUNCTIONS = {
    "ferrite_family": ("family", "ferrite_family_", "families",
                       ["ferrite_families", "ferrite_operations"]),
    "ferrite_provider": ("provider", "ferrite_provider_", "providers",
                         ["ferrite_provider_support", "ferrite_operations"]),
}
# Builtin lists: function → (room kind, stage, folder under src/); they depend
# on every room of their kind declared before them.
BUILTIN_FUNCTIONS = {
    "ferrite_builtin_families": ("family", "ferrite_families_builtin", "families/builtin"),
    "ferrite_builtin_providers": ("provider", "ferrite_builtin_providers", "providers/builtin"),
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
KEYWORDS = {"SOURCES", "HEADERS", "DEPS", "EXTERNAL"}


def read_stages(root):
    stages = {}
    order = []
    for folder, _, files in sorted(os.walk(os.path.join(root, "src"))):
        if "CMakeLists.txt" not in files:
            continue
        path = os.path.join(folder, "CMakeLists.txt")
        text = re.sub(r"#[^\n]*", "", open(path, encoding="utf-8").read())
        for call in STAGE_CALL.finditer(text):
            kind, words = call.group(1), call.group(2).split()
            room = None
            if kind in ROOM_FUNCTIONS:
                room, prefix, folder, implicit = ROOM_FUNCTIONS[kind]
                words = [prefix + words[0], "SOURCES", f"{folder}/{words[0]}", "DEPS"] + \
                        implicit + [w for w in words[1:] if w != "DEPS"]
            elif kind in BUILTIN_FUNCTIONS:
                kind_of_room, target, folder = BUILTIN_FUNCTIONS[kind]
                words = [target, "SOURCES", folder, "DEPS"] + \
                        [name for name, stage in stages.items() if stage["room"] == kind_of_room]
            target, fields, key = words[0], {"DEPS": [], "EXTERNAL": []}, None
            for word in words[1:]:
                if word in KEYWORDS:
                    key = word
                elif key in ("DEPS", "EXTERNAL"):
                    fields[key].append(word)
                elif key:
                    fields[key] = word
            if target in stages:
                sys.exit(f"{path}: stage {target} declared twice")
            stages[target] = {
                "sources": "src/" + fields["SOURCES"],
                "headers": "include/" + fields["HEADERS"] if "HEADERS" in fields else None,
                "deps": fields["DEPS"],
                "room": room,
            }
            order.append(target)
    return stages, order


def closure(stages):
    """Transitive dependencies of every stage; exits on a cycle or unknown dep."""
    result, visiting = {}, set()

    def visit(name, chain):
        if name in result:
            return result[name]
        if name in visiting:
            sys.exit("stage graph has a cycle: " + " -> ".join(chain + [name]))
        visiting.add(name)
        deps = set()
        for dep in stages[name]["deps"]:
            if dep not in stages:
                sys.exit(f"stage {name} depends on unknown stage {dep}")
            deps |= {dep} | visit(dep, chain + [name])
        visiting.discard(name)
        result[name] = deps
        return deps

    for name in stages:
        visit(name, [])
    return result


def owner(stages, relpath):
    """(stage, public?) owning a repository-relative path; longest folder wins."""
    best = None
    for name, stage in stages.items():
        for folder, public in ((stage["headers"], True), (stage["sources"], stage["headers"] is None)):
            if folder and (relpath + "/").startswith(folder + "/"):
                if best is None or len(folder) > best[2]:
                    best = (name, public, len(folder))
    return (best[0], best[1]) if best else (None, False)


def resolve(root, stages, including, name):
    """Repository-relative path of an included header, or None."""
    local = os.path.normpath(os.path.join(os.path.dirname(including), name))
    if os.path.isfile(os.path.join(root, local)):
        return local
    for base in ["include"] + sorted({s["sources"].split("/")[0] for s in stages.values()}):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--graph", action="store_true")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    stages, order = read_stages(root)
    if not stages:
        sys.exit("no ferrite_stage() calls found under src/")
    deps = closure(stages)
    if args.graph:
        for name in order:
            print(f"{name}: {' '.join(stages[name]['deps']) or '-'}")
        return 0

    violations, checked = [], 0
    for top in ("src", "include"):
        for folder, _, files in sorted(os.walk(os.path.join(root, top))):
            for file in sorted(files):
                if not file.endswith((".h", ".cc")):
                    continue
                relpath = os.path.relpath(os.path.join(folder, file), root)
                if relpath.startswith(("src/cli/", "src/capi/")) or relpath == "include/ferrite/ferrite.h":
                    continue  # the CLI and the C API are on top of every stage
                stage, _ = owner(stages, relpath)
                if stage is None:
                    violations.append(f"{relpath}: belongs to no stage (add it to a ferrite_stage folder)")
                    continue
                text = open(os.path.join(root, relpath), encoding="utf-8").read()
                for match in INCLUDE.finditer(text):
                    checked += 1
                    line = text.count("\n", 0, match.start()) + 1
                    target = resolve(root, stages, relpath, match.group(1))
                    where = f"{relpath}:{line}: #include \"{match.group(1)}\""
                    if target is None and match.group(1).endswith(".inc"):
                        continue  # generated into the build tree (cmake/FerriteStages.cmake)
                    if target is None:
                        violations.append(f"{where}: no stage owns this header")
                        continue
                    target_stage, public = owner(stages, target)
                    if target_stage == stage:
                        continue
                    if target_stage is None:
                        violations.append(f"{where}: {target} belongs to no stage")
                    elif target_stage not in deps[stage]:
                        violations.append(
                            f"{where}: stage {stage} does not depend on {target_stage} "
                            f"(an upward or sideways include; {stage} depends on "
                            f"{', '.join(sorted(deps[stage])) or 'nothing'})")
                    elif not public:
                        violations.append(f"{where}: {target} is private to stage {target_stage}")
    for violation in violations:
        print(violation)
    print(f"check_layers: {len(stages)} stages, {checked} includes checked, "
          f"{len(violations)} violation(s)")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
