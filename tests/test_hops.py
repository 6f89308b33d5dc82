"""The parameter-path tracer (python -m tests.tools.hops): which fedlib functions receive a value, the hand-offs and
the checks, on a real call chain of known shape."""
import numpy as np

from fedlib.core import numpy_rng
from fedlib.data import partition
from tests.tools import hops


def test_trace_follows_the_value_through_the_partition():
    labels = np.arange(200) % 10
    out = hops.trace(lambda: partition.split(labels, hops.SENTINEL, "iid", numpy_rng(0, "data")))
    # split(num_clients=11) -> iid(labels, num_clients) and its check of num_clients (a positive int)
    assert {"data.partition:split", "data.partition:iid"} <= set(out["function_list"])
    assert out["module_list"] == ["data.partition"] and out["modules"] == 1
    assert "data.partition:_check_positive -> core.validate:check_int" in out["check_list"]
    assert out["hand_offs"] >= 2 and out["checks"] == len(out["check_list"]) >= 1


def test_trace_sees_nothing_when_the_value_is_another():
    labels = np.arange(200) % 10
    out = hops.trace(lambda: partition.split(labels, 10, "iid", numpy_rng(0, "data")))
    assert out["functions"] == out["hand_offs"] == out["checks"] == 0


def test_an_object_carries_the_value_as_a_field_not_as_a_property():
    from fedlib.dtfl import DtflConfig

    assert hops._carries(DtflConfig(num_clients=hops.SENTINEL))
    assert not hops._carries(DtflConfig(num_clients=10))
    assert hops._carries(("cfg", hops.SENTINEL)) and not hops._carries((hops.SENTINEL, 3))    # a job; a pair of ints
    assert hops._carries({"s": DtflConfig(num_clients=hops.SENTINEL)})                       # keyword job

    class Derived:
        @property
        def num_devices(self):
            return hops.SENTINEL

    assert not hops._carries(Derived())


def test_a_notebooks_cells_hand_the_injected_value_on(tmp_path):
    import json

    cells = [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": ["num_clients: int = 3\n"]},
             {"cell_type": "markdown", "metadata": {}, "source": ["The clients' data:"]},
             {"cell_type": "code", "metadata": {}, "source": [
                 "import numpy as np\n", "from fedlib.core import numpy_rng\n", "from fedlib.data import partition\n",
                 "parts = partition.split(np.arange(200) % 10, num_clients, 'iid', numpy_rng(0, 'data'))\n"]}]
    path = tmp_path / "tiny.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    out = hops.trace(lambda: hops.run_cells(path, {"num_clients": hops.SENTINEL}))
    # the injected value, not the cell's 3, reaches the partition, handed on by the notebook's own cell
    assert "notebook.tiny:<module> -> data.partition:split" in out["hand_off_list"]
    assert out["module_list"] == ["data.partition"]          # the tracer's harness (run_cells) is not counted
    assert not hops.trace(lambda: hops.run_cells(path, {}))["functions"]
