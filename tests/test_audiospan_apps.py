"""The anchor_chain and audiospan_rubric Space widgets, served by Gradio and called through gradio_client."""

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _serve(name):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    spec = importlib.util.spec_from_file_location(f"{name}_app", ROOT / "metrics" / name / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    demo = app.build_demo()
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    return app, demo


def test_anchor_chain_widget():
    from gradio_client import Client

    app, demo = _serve("anchor_chain")
    try:
        client = Client(demo.local_url, verbose=False)
        chain = client.predict(app.EXAMPLE_CHAIN, "chain", "exact", api_name="/score")
        assert chain["chain"] == pytest.approx(0.5) and chain["unparsed"] == 1  # as in the demo, by hand
        mcq = client.predict(app.EXAMPLE_MCQ, "accuracy", "tolerant", api_name="/score")
        assert mcq["accuracy"] == round(4 / 6, 4)  # "The answer is C" parses in tolerant mode; 4 decimals shown
    finally:
        demo.close()


def test_audiospan_rubric_widget():
    from gradio_client import Client

    app, demo = _serve("audiospan_rubric")
    try:
        client = Client(demo.local_url, verbose=False)
        result = client.predict(app.EXAMPLE, api_name="/score")
        assert result["rubric"] == round(5 / 6, 4)  # (1 + 0.5*(1+0)/2) / 1.5; 4 decimals shown
        with pytest.raises(Exception, match="semantic"):
            client.predict(app.EXAMPLE.replace('"semantic": "correct"', '"semantic": "great"'), api_name="/score")
    finally:
        demo.close()
