"""The numbers a case's docstring states are the numbers the case prints (slow: full-size runs).

A newcomer compared them and found drift (case 08 spoke of f_C = 15.4 N where its controller used 24.03 N;
case 15 listed other singular values than it printed). These runs read the summary of the full-size case and
compare it with its docstring, to the digits the docstring gives. ``make test-slow`` runs them; the fast
suite checks the parameter lines and the user guide's snippet (tests/test_docs.py).
"""

import re

import pytest
from case_files import load

pytestmark = pytest.mark.slow


def stated(doc: str, pattern: str) -> list[str]:
    """The numbers (as written) captured by ``pattern`` in ``doc``."""
    match = re.search(pattern, " ".join(doc.split()))
    assert match, pattern
    return list(match.groups())


def printed_as(value: float, text: str) -> bool:
    """``value`` rounded to the significant digits of ``text`` (e.g. "8.9e-9", "24.0") reads as ``text``."""
    mantissa = text.lower().split("e")[0].lstrip("-")
    digits = len(mantissa.replace(".", "").lstrip("0")) or 1
    return float(f"{value:.{digits}g}") == float(text)


def test_case_08_states_both_constraint_forces_it_computes(tmp_path):
    from test_cases_control_de import de99_check

    import flexbody as fb

    case = load("08_parallel_platform_control.py")
    s = case.main(tmp_path / "08")
    asm = case.build().assemble()
    fC = {
        k: de99_check(asm, case.task(asm)[k], fb.Results.load(tmp_path / "08" / k))["fC_max"].max()
        for k in ("elbows", "platform")
    }
    de99, controller = stated(case.__doc__, r"up to ([\d.]+) N from \[DE-99\].*?up to ([\d.]+) N for the controller")
    assert printed_as(fC["platform"], de99), (fC["platform"], de99)
    assert printed_as(s["platform"]["max_abs_fC_controller"], controller)
    assert fC["elbows"] == 0.0 and "exactly 0 for (a)" in " ".join(case.__doc__.split())


def test_case_15_states_the_singular_values_and_verdict_it_prints(tmp_path):
    case = load("15_beam_tip_inverse_statics.py")
    s = case.main(tmp_path / "15")
    direct = s["direct_map"]
    big, small = stated(case.__doc__, r"direct map σ = ([\d.e-]+), ([\d.e-]+) \[1/m\]: rank (?:\d)")
    assert printed_as(direct["singular_values"][0], big) and printed_as(direct["singular_values"][1], small)
    rank = int(stated(case.__doc__, r"\[1/m\]: rank (\d)")[0])
    assert direct["rank"] == rank and direct["ok"] is (rank == 2)
    torques = stated(case.__doc__, r"inverse statics τ_k = \(([−\d.]+), ([−\d.]+)\) N·m")
    for value, text in zip(s["inverse_statics"]["tau_k"], torques):
        assert printed_as(value, text.replace("−", "-"))
