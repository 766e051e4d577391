"""The Python module `ferrite` (ctest: python_module; PYTHONPATH=build/python).

    FERRITE_BINARY=build/ferrite PYTHONPATH=build/python python3 -m unittest tests/python/test_ferrite.py
"""
import os
import subprocess
import tempfile
import threading
import unittest

import ferrite

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "..", "shared", "models", "stories260K.gguf")
BINARY = os.environ.get("FERRITE_BINARY", os.path.join(ROOT, "build", "ferrite"))


class ModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = ferrite.Model(MODEL, context=128, threads=1)

    def test_plan_is_the_one_ferrite_compile_writes(self):
        with tempfile.TemporaryDirectory() as work:
            mine = os.path.join(work, "python.plan.json")
            plan_id = self.model.compile(mine)
            self.assertTrue(plan_id.startswith("plan/sha256/"))
            self.assertEqual(plan_id, self.model.plan_id)
            cli = os.path.join(work, "cli.plan.json")
            printed = subprocess.run([BINARY, "compile", MODEL, "--context", "128", "-o", cli],
                                     check=True, capture_output=True, text=True).stdout
            self.assertEqual(printed.splitlines()[0], plan_id)
            with open(mine, "rb") as a, open(cli, "rb") as b:
                self.assertEqual(a.read(), b.read())
            # A saved plan is rebuilt and compared; a tampered one is refused.
            again = ferrite.Model(MODEL, context=128, threads=1, plan=mine)
            self.assertEqual(again.plan_id, plan_id)
            with open(mine, "r", encoding="utf-8") as f:
                text = f.read()
            with open(mine, "w", encoding="utf-8") as f:
                f.write(text.replace('"context_length":128', '"context_length":64', 1))
            with self.assertRaises(ferrite.Error) as caught:
                ferrite.Model(MODEL, context=128, threads=1, plan=mine)
            self.assertIn("hash", str(caught.exception))
            self.assertEqual(caught.exception.status, "invalid_plan")

    def test_explain_is_a_dict(self):
        explained = self.model.explain()
        self.assertEqual(explained["plan_id"], self.model.plan_id)
        self.assertEqual(len(explained["nodes"]), 79)
        self.assertIn("provider.cpu.fast.linear", {n["provider_id"] for n in explained["nodes"]})

    def test_tokenize_round_trip(self):
        text = "Once upon a time, there was a little cat."
        ids = self.model.tokenize(text)
        self.assertEqual(ids[0], 1)
        self.assertEqual(self.model.detokenize(ids[1:]), (" " + text).encode())
        self.assertEqual(self.model.tokenize(text, add_special=False), ids[1:])
        self.assertEqual(self.model.vocab_size, 512)
        self.assertEqual(self.model.context_length, 128)

    def test_generate_is_deterministic_and_stops(self):
        first = [t.id for t in self.model.generate("Once upon a time", max_tokens=12, ignore_eos=True)]
        second = [t.id for t in self.model.generate("Once upon a time", max_tokens=12, ignore_eos=True)]
        self.assertEqual(len(first), 12)
        self.assertEqual(first, second)
        text = "".join(t.text for t in self.model.generate("Once upon a time", max_tokens=12,
                                                           ignore_eos=True))
        self.assertEqual(self.model.detokenize(first).decode("utf-8"), text)
        # Leaving early cancels; the model is free again at once.
        for count, _ in enumerate(self.model.generate("Once", max_tokens=200, ignore_eos=True), 1):
            if count == 3:
                break
        with self.model.generate("Once", max_tokens=200) as tokens:
            next(tokens)
        self.assertEqual(len(list(self.model.generate("Once", max_tokens=5, ignore_eos=True))), 5)

    def test_one_generation_at_a_time_per_model(self):
        tokens = self.model.generate("Once", max_tokens=50, ignore_eos=True)
        next(tokens)
        with self.assertRaises(ferrite.Error):
            self.model.generate("Once", max_tokens=5)
        tokens.close()
        self.assertEqual(len(list(self.model.generate("Once", max_tokens=4, ignore_eos=True))), 4)

    def test_threads_run_while_tokens_are_computed(self):
        # Two models generate in two Python threads at once (possible only
        # because the GIL is released while computing) and give what one
        # model gives alone.
        other = ferrite.Model(MODEL, context=128, threads=1)
        alone = [t.id for t in self.model.generate("Lily", max_tokens=20, ignore_eos=True)]
        results = {}

        def run(name, model):
            results[name] = [t.id for t in model.generate("Lily", max_tokens=20, ignore_eos=True)]

        threads = [threading.Thread(target=run, args=(n, m))
                   for n, m in (("a", self.model), ("b", other))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        self.assertEqual(results, {"a": alone, "b": alone})

    def test_errors_name_the_file(self):
        with self.assertRaises(ferrite.Error) as caught:
            ferrite.Model("/nonexistent/model.gguf")
        self.assertIn("/nonexistent/model.gguf", str(caught.exception))
        self.assertIsInstance(caught.exception, RuntimeError)
        with self.assertRaises(ferrite.Error):
            ferrite.Model(MODEL, memory_bytes=1024)


if __name__ == "__main__":
    unittest.main()
