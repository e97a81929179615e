"""``paddle.version.series`` names the patch series the installed wheel
carries: its version label, the Paddle commit it is based on and the
subjects of its patches, in order."""

import email
import importlib.metadata
import pathlib

import paddle
import paddle.version.series as series

PATCHES = pathlib.Path(__file__).resolve().parent.parent / "patches"


def test_series_matches_the_installed_wheel():
    assert series.version == importlib.metadata.version("paddlepaddle")
    assert series.version.startswith(paddle.__version__ + "+patched.")
    assert series.base_commit == paddle.version.commit


def test_series_lists_the_patches_in_order():
    names = (PATCHES / "series").read_text().split()
    subjects = []
    for name in names:
        with open(PATCHES / name, encoding="utf-8") as f:
            subject = email.message_from_file(f)["Subject"]
        subjects.append(" ".join(subject.split()))
    assert series.patches == tuple(subjects)
