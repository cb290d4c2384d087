"""The private evaluate and datasets names the package uses live in one module (``base.hf_internals``), were
checked on setup.py's pins, and still hold in the installed versions: an upgrade of either package fails here
first, naming what changed. On another version, a name that is gone fails loudly where it is used, and one
that is still there warns once naming the versions it was checked on."""

import ast
import re
import warnings
from pathlib import Path

import datasets
import evaluate
import pytest

from audioreason.base import hf_internals
from audioreason.base.hf_internals import (
    CHECKED,
    PRIVATE,
    PrivateAPIChanged,
    UncheckedVersionWarning,
    info_yaml,
    require,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh_warnings(monkeypatch):
    """No package warned about yet in this process."""
    monkeypatch.setattr(hf_internals, "_warned", set())


def test_the_checked_versions_are_setup_py_s_pins_and_the_installed_ones():
    pins = dict(re.findall(r'"(evaluate|datasets)==([^"]+)"', (ROOT / "setup.py").read_text()))
    assert CHECKED == pins, "a pin moved: check every entry of hf_internals.PRIVATE on it, then update CHECKED"
    assert {"evaluate": evaluate.__version__, "datasets": datasets.__version__} == CHECKED


@pytest.mark.parametrize("key", sorted(k for k, p in PRIVATE.items() if k != "selected_feature_format"))
def test_every_private_name_is_there_as_it_was_checked(key, fresh_warnings):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not even a warning on the pinned versions
        found = require(key)
    assert found is not None


def test_the_instance_attribute_is_set_on_every_module_and_holds_the_chosen_features(fresh_warnings):
    module = evaluate.load(str(ROOT / "metrics" / "text_prior_decomposition"))
    assert require("selected_feature_format", on=module) is None  # nothing added yet
    module.add_batch(predictions=[True], references=[None], model=["m"], item_id=["q"], condition=["full"])
    assert module.chosen_features()["predictions"] == datasets.Value("bool")


def test_what_the_private_names_do_is_what_the_package_relies_on():
    # The dict of packaged builders is the one load_dataset reads (not a copy).
    import datasets.load

    assert require("_PACKAGED_DATASETS_MODULES") is datasets.load._PACKAGED_DATASETS_MODULES
    # evaluate still checks a column's first value, and refuses a None there without the shells' fix.
    features = datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")})
    plain = evaluate.Metric.__new__(evaluate.Metric)
    with pytest.raises(TypeError):
        plain._enforce_nested_string_type(features["predictions"], None)
    # A DatasetInfo's YAML form holds its features and splits, as a card's dataset_info entry does.
    info = datasets.DatasetInfo(features=features)
    info.splits = datasets.SplitDict()
    info.splits.add(datasets.SplitInfo(name="test", num_examples=2))
    entry = info_yaml(info)
    assert entry["splits"] == [{"name": "test", "num_bytes": 0, "num_examples": 2}]
    assert [f["name"] for f in entry["features"]] == ["predictions", "references"]


def test_the_version_guard_warns_once_on_a_faked_version(monkeypatch, fresh_warnings):
    monkeypatch.setattr(evaluate, "__version__", "9.9.9")
    with pytest.warns(
        UncheckedVersionWarning,
        match=r"evaluate 9\.9\.9 is installed; .* checked on evaluate "
        r"0\.4\.6 \(setup\.py's pin\)",
    ):
        require("_create_importable_file")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        require("init_dynamic_modules")  # once per package and process
    with pytest.warns(UncheckedVersionWarning):  # the other package is checked on its own
        monkeypatch.setattr(datasets, "__version__", "9.0.0")
        require("_to_yaml_dict")


def test_a_name_that_is_gone_fails_where_it_is_used(monkeypatch, fresh_warnings):
    from evaluate.module import EvaluationModule

    monkeypatch.setattr(evaluate, "__version__", "9.9.9")
    monkeypatch.delattr(EvaluationModule, "_infer_feature_from_batch")
    with pytest.raises(
        PrivateAPIChanged,
        match=r"^evaluate 9\.9\.9: evaluate\.module\.EvaluationModule\."
        r"_infer_feature_from_batch is gone\. .* install evaluate==0\.4\.6",
    ):
        evaluate.load(str(ROOT / "metrics" / "text_prior_decomposition"))  # on creation, not on a later add


def test_a_changed_signature_fails_before_anything_is_written(monkeypatch, tmp_path):
    import evaluate.loading

    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))
    monkeypatch.setattr(evaluate.loading, "_create_importable_file", lambda local_path, name: None)
    from audioreason.apps.shipped import register_metrics

    with pytest.raises(PrivateAPIChanged, match=r"_create_importable_file takes \('local_path', 'name'\), not "):
        register_metrics()
    assert not (tmp_path / "modules").exists()


def test_a_changed_type_fails(monkeypatch):
    import datasets.packaged_modules

    monkeypatch.setattr(datasets.packaged_modules, "_PACKAGED_DATASETS_MODULES", ())
    with pytest.raises(PrivateAPIChanged, match="_PACKAGED_DATASETS_MODULES is a tuple, not a dict"):
        require("_PACKAGED_DATASETS_MODULES")


def _private_uses(path: Path) -> set[str]:
    """The private evaluate/datasets names a file imports, and the names of PRIVATE it spells out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {
        a.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("evaluate", "datasets")
        for a in node.names
        if a.name.startswith("_")
    }
    names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    return found | (names & set(PRIVATE))


def test_no_other_file_uses_a_private_name():
    files = [
        p
        for folder in ("audioreason", "metrics", "spaces", "datasets_scripts")
        for p in sorted((ROOT / folder).rglob("*.py"))
    ]
    uses = {
        p.relative_to(ROOT).as_posix(): sorted(_private_uses(p))
        for p in files
        if p != ROOT / "audioreason" / "base" / "hf_internals.py"
    }
    assert {f: u for f, u in uses.items() if u} == {}, "reach them through audioreason.base.hf_internals"


def test_a_module_that_chooses_features_must_say_how():
    """The mixin leaves the choice to the module: one without ``choose_features`` is refused where its class is
    defined, never at the first row it adds."""
    from audioreason.base.hf_internals import ChoosesFeatures

    with pytest.raises(TypeError, match="NoRule must define choose_features"):
        type("NoRule", (ChoosesFeatures,), {})

    class WithRule(ChoosesFeatures):
        def choose_features(self, predictions):
            return "chosen"

    assert WithRule.choose_features(None, []) == "chosen"
