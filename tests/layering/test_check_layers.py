#!/usr/bin/env python3
"""scripts/check-layers.py against small trees that break one rule each
(CTest layering_rules): each broken rule must fail with its own finding, and
the same tree without the break must pass."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                       "check-layers.py")

CORE_LAYERS = """\
# A small house: estimate sits below attention in the order, but no arrow
# of attention points at it.
util:
config: util
estimate: config
attention: config
engines: attention estimate
"""


def body(lines):
    return "".join(f"    x += {n};\n" for n in range(lines))


class CheckLayersTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.root = self.folder.name
        self.write("core/layers.txt", CORE_LAYERS)
        self.write("core/util/strings.h", "#pragma once\nint trim();\n")
        self.write("core/util/strings.cpp", '#include "util/strings.h"\nint trim() { return 0; }\n')
        self.write("core/config/run_config.h", '#pragma once\n#include "util/strings.h"\n')
        self.write("core/estimate/cost.h", '#pragma once\n#include "config/run_config.h"\n')
        self.write("core/attention/naive.h", '#pragma once\n#include "config/run_config.h"\n')
        self.write("core/engines/runner.h",
                   '#pragma once\n#include "attention/naive.h"\n#include "estimate/cost.h"\n')

    def tearDown(self):
        self.folder.cleanup()

    def write(self, relative, text):
        path = os.path.join(self.root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)

    def check(self, *extra):
        done = subprocess.run([sys.executable, CHECKER, "--root", self.root, *extra],
                              capture_output=True, text=True)
        return done.returncode, done.stdout

    def assertFails(self, *needles):
        code, out = self.check()
        self.assertEqual(code, 1, out)
        for needle in needles:
            self.assertIn(needle, out)
        return out

    def test_a_tree_that_keeps_every_rule_passes(self):
        code, out = self.check()
        self.assertEqual(code, 0, out)
        self.assertIn("0 finding(s)", out)

    def test_an_upward_include_fails(self):
        self.write("core/config/run_config.cpp", '#include "engines/runner.h"\n')
        self.assertFails("core/config/run_config.cpp:1: includes engines/runner.h from layer "
                         "'engines', which 'config' does not point at")

    def test_an_include_below_in_the_order_but_without_an_arrow_fails(self):
        self.write("core/attention/naive.cpp", '#include "estimate/cost.h"\n')
        self.assertFails("core/attention/naive.cpp:1: includes estimate/cost.h from layer "
                         "'estimate', which 'attention' does not point at "
                         "(core/layers.txt: attention: config)")

    def test_an_include_through_two_arrows_passes(self):
        self.write("core/engines/runner.cpp", '#include "util/strings.h"\n')
        code, out = self.check()
        self.assertEqual(code, 0, out)

    def test_arrows_in_a_circle_fail(self):
        self.write("core/layers.txt", CORE_LAYERS.replace("config: util", "config: util engines"))
        self.assertFails("the arrows of 'config' lead back to it")

    def test_an_arrow_to_no_layer_fails(self):
        self.write("core/layers.txt", CORE_LAYERS.replace("util:", "util: nowhere"))
        self.assertFails("'util' points at 'nowhere', which is not a layer")

    def test_a_folder_that_is_no_layer_fails(self):
        self.write("core/misc/thing.h", "#pragma once\n")
        self.assertFails("folder 'misc' is not a layer in core/layers.txt")

    def test_parts_that_include_each_other_fail(self):
        self.write("core/util/a.h", "#pragma once\n")
        self.write("core/util/b.h", "#pragma once\n")
        self.write("core/util/a.cpp", '#include "util/a.h"\n#include "util/b.h"\n')
        self.write("core/util/b.cpp", '#include "util/b.h"\n#include "util/a.h"\n')
        self.assertFails("these parts include each other in a circle: core/util/a -> core/util/b")

    def test_a_long_free_function_fails_and_one_of_80_lines_passes(self):
        self.write("core/util/long.cpp", "int shortEnough() {\n" + body(78) + "}\n")
        code, out = self.check()
        self.assertEqual(code, 0, out)
        self.write("core/util/long.cpp", "int tooLong() {\n" + body(79) + "}\n")
        self.assertFails("core/util/long.cpp:1: tooLong is 81 lines (at most 80)")

    def test_a_long_function_inside_a_class_body_fails(self):
        self.write("core/util/holder.h", textwrap.dedent("""\
            #pragma once
            namespace stepscope {
            class Holder final : public Base {
                Q_OBJECT
            public:
                int small() const { return 1; }
                int x_{0};
                std::vector<int> table_ = {1, 2, 3};
            private:
                void step(int opcode)
                {
            """) + body(85) + "    }\n};\n}  // namespace stepscope\n")
        out = self.assertFails("core/util/holder.h:10: Holder::step is 88 lines")
        self.assertNotIn("small", out)

    def test_a_long_constructor_with_braced_member_initialisers_fails(self):
        self.write("core/util/ctor.cpp", textwrap.dedent("""\
            Widget::Widget(QWidget* parent)
                : QWidget(parent), list_{1, 2}, name_("{") {
            """) + body(90) + "}\n")
        self.assertFails("core/util/ctor.cpp:1: Widget::Widget is 93 lines")

    def test_braces_in_strings_comments_and_initialisers_are_not_functions(self):
        self.write("core/util/quiet.cpp", textwrap.dedent("""\
            // void commented() {
            const char* text = "int inString() {";
            const char* raw = R"(void raw() { )";
            char brace = '{';
            int values[] = {1, 2, 3};
            struct Point { int x{0}; int y = 1'000; };
            enum class Kind { A, B };
            int f() { return 0; }
            """) + "int g() {\n" + body(10) + "}\n")
        code, out = self.check("--max-function-lines", "12")
        self.assertEqual(code, 0, out)
        code, out = self.check("--max-function-lines", "11")
        self.assertEqual(code, 1, out)
        self.assertIn("core/util/quiet.cpp:9: g is 12 lines", out)

    def test_a_long_lambda_outside_any_function_fails_and_one_inside_counts_for_it(self):
        self.write("core/util/table.cpp",
                   "const auto handler = [](int x) {\n" + body(85) + "    return x;\n};\n")
        self.assertFails("core/util/table.cpp:1: handler")
        self.write("core/util/table.cpp", "void outer() {\n    auto inner = [] {\n" + body(85) +
                   "    };\n}\n")
        out = self.assertFails("core/util/table.cpp:1: outer is 89 lines")
        self.assertNotIn("inner", out)

    def test_ui_layers_refuse_an_upward_include_and_widgets_in_models(self):
        self.write("ui/layers.txt", "models:\nwidgets: models\nviews: widgets\n.: views\n")
        self.write("ui/models/format.h", "#pragma once\n#include <QString>\n")
        self.write("ui/widgets/plot.h", '#pragma once\n#include "models/format.h"\n')
        self.write("ui/views/memory_view.h", '#pragma once\n#include "widgets/plot.h"\n')
        self.write("ui/main_window.cpp",
                   '#include "views/memory_view.h"\n#include "engines/runner.h"\n')
        code, out = self.check()
        self.assertEqual(code, 0, out)
        self.write("ui/models/format.cpp",
                   '#include "models/format.h"\n#include "views/memory_view.h"\n'
                   "#include <QtWidgets/QLabel>\n")
        self.assertFails("ui/models/format.cpp:2: includes views/memory_view.h from layer "
                         "'views', which 'models' does not point at",
                         "ui/models/format.cpp:3: includes <QtWidgets/QLabel>, a widget header")

    def test_a_ui_include_beside_the_file_is_resolved_there(self):
        self.write("ui/layers.txt", "models:\nviews: models\n")
        self.write("ui/views/part.h", "#pragma once\n")
        self.write("ui/views/tab.cpp", '#include "part.h"\n')
        self.write("ui/models/data.cpp", '#include "../views/part.h"\n')
        self.assertFails("ui/models/data.cpp:1: includes ../views/part.h from layer 'views'")

    def test_a_named_docs_page_must_exist(self):
        self.write("core/layers.txt", "# see docs/architecture.md\n" + CORE_LAYERS)
        self.assertFails("core/layers.txt:1: names docs/architecture.md, which does not exist")
        self.write("docs/architecture.md", "# the house\n")
        code, out = self.check()
        self.assertEqual(code, 0, out)

    def test_constructs_that_once_hid_a_long_function_are_measured(self):
        hiders = {
            "braced default argument": "void f(std::vector<int> v = {}, int n = {1}) {\n",
            "brace inside a member's initialiser": "Holder::Holder() : v_(Bar{1}), w_{2} {\n",
            "function-try-block": "int g() try {\n",
            "requires clause": "template <class T>\nvoid h(T t) requires std::integral<T> {\n",
        }
        for what, opening in hiders.items():
            with self.subTest(what):
                self.write("core/util/hider.cpp", opening + body(90) + "}\n")
                self.assertFails("core/util/hider.cpp:1: ")
        self.write("core/util/hider.cpp", "int g() try {\n" + body(50) +
                   "} catch (const std::exception& e) {\n" + body(40) + "}\n")
        self.assertFails("core/util/hider.cpp:1: g is 93 lines")
        self.write("core/util/hider.cpp",
                   "const auto each = []<class T>(T t) {\n" + body(90) + "};\n")
        self.assertFails("core/util/hider.cpp:1: each")

    def test_each_branch_of_a_conditional_is_not_a_second_opening(self):
        self.write("core/util/branches.cpp", textwrap.dedent("""\
            #ifdef HAVE_CUDA
            int run(CudaTensor t) {
            #else
            int run(CpuTensor t) {
            #endif
            """) + body(90) + "}\nint after() {\n" + body(90) + "}\n")
        out = self.assertFails("core/util/branches.cpp:2: run is", "core/util/branches.cpp:97: after")
        self.assertEqual(out.count(" lines (at most"), 2, out)

    def test_a_subfolder_is_a_layer_of_its_own_or_a_finding(self):
        self.write("core/util/deeper/thing.h", "#pragma once\n")
        self.assertFails("core/util/deeper/thing.h: folder 'util/deeper' is not a layer")
        self.write("ui/layers.txt", "models:\n.: models\n")
        self.write("ui/main_window.cpp", '#include "models/format.h"\n')
        self.write("ui/models/format.h", "#pragma once\n")
        self.write("ui/extras/helper.h", "#pragma once\n")
        self.assertFails("ui/extras/helper.h: folder 'extras' is not a layer in ui/layers.txt")

if __name__ == "__main__":
    unittest.main()
