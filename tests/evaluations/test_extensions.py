"""Extension builds: hashed names keep same-named extensions apart; language detection."""

from __future__ import annotations

import time
from pathlib import Path

from evaluations.run import hashed_loader, kernel_language, needs_build


def _fake_load_inline(name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None,
                      build_directory=None, verbose=False):
    return {"name": name, "build_directory": build_directory, "cpp": cpp_sources}


def test_same_name_different_source_builds_apart(tmp_path):
    load = hashed_loader(_fake_load_inline, tmp_path, hash_files=False)
    add = load("fused_kernel", "float f(float a, float b) { return a + b; }", functions=["f"])
    sub = load(name="fused_kernel", cpp_sources="float f(float a, float b) { return a - b; }", functions=["f"])
    again = load("fused_kernel", "float f(float a, float b) { return a + b; }", functions=["f"], verbose=True)
    assert add["name"] != sub["name"]
    assert add["name"].startswith("fused_kernel_") and add["name"].isidentifier()
    assert add["build_directory"] != sub["build_directory"]
    assert again == add  # the same source reuses the same cache entry
    assert add["build_directory"].startswith(str(tmp_path))


def test_each_load_says_whether_it_built_or_reused_the_cached_binary(tmp_path, capsys):
    def fake_build(name, cpp_sources, build_directory=None, verbose=False):
        so = Path(build_directory) / f"{name}.so"
        if not so.exists():  # ninja builds only what is missing or out of date
            so.write_bytes(b"\0")
        return name

    load = hashed_loader(fake_build, tmp_path, hash_files=False)
    load("k", "int a;")
    load("k", "int a;")
    said = [line for line in capsys.readouterr().err.splitlines() if "extension k_" in line]
    assert len(said) == 2 and " built in " in said[0] and " loaded from the build cache in " in said[1]


def test_a_build_that_failed_fails_at_once_in_later_processes_and_other_failures_are_tried_again(tmp_path):
    import pytest

    calls: list[str] = []

    def failing_build(name, cpp_sources, build_directory=None, verbose=False):
        calls.append(cpp_sources)
        if cpp_sources == "broken":
            raise RuntimeError(f"Error building extension '{name}': error: 'max_dim' was not declared")
        raise RuntimeError("CUDA error: out of memory")  # not the compiler's verdict on the sources

    load = hashed_loader(failing_build, tmp_path, hash_files=False)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="Error building extension 'k_.*'max_dim' was not declared"):
            load("k", "broken")
    assert calls == ["broken"]  # the second process is told at once (the mark is in the candidate's folder)
    again = hashed_loader(failing_build, tmp_path, hash_files=False)  # as a fresh process would wrap it
    with pytest.raises(RuntimeError, match="Error building extension"):
        again("k", "broken")
    assert calls == ["broken"]
    for _ in range(2):
        with pytest.raises(RuntimeError, match="out of memory"):
            load("k", "fine")
    assert calls == ["broken", "fine", "fine"]


def test_load_hashes_file_contents(tmp_path):
    def fake_load(name, sources, extra_cflags=None, build_directory=None, verbose=False):
        return name

    src = tmp_path / "k.cpp"
    load = hashed_loader(fake_load, tmp_path / "build", hash_files=True)
    src.write_text("int a;")
    first = load("ext", [str(src)])
    src.write_text("int b;")
    assert load("ext", [str(src)]) != first


def test_kernel_language():
    cuda = 'from torch.utils.cpp_extension import load_inline\nload_inline(name="k", cpp_sources="", cuda_sources=src)'
    cpp = 'from torch.utils.cpp_extension import load_inline\nload_inline(name="k", cpp_sources=src)'
    triton = "import triton\nimport triton.language as tl\n@triton.jit\ndef k(x): pass"
    assert kernel_language(cuda) == "cuda"
    assert kernel_language(cpp) == "cpp"
    assert kernel_language(triton) == "triton"
    assert kernel_language(triton + "\n" + cuda) == "mixed"
    assert kernel_language("import torch\nclass ModelNew: pass") == "pytorch"
    assert needs_build(cpp) and not needs_build(triton)


def _torch_like_build(calls: list[str], release=None):
    """A build that makes and removes torch's lock file in its folder, as ``load_inline`` does (waiting on
    ``release`` meanwhile, where given); it fails where it finds the lock already there, where torch would wait."""
    import os

    def build(name, cpp_sources, build_directory=None, verbose=False):
        lock = Path(build_directory) / "lock"
        fd = os.open(lock, os.O_CREAT | os.O_EXCL)  # FileExistsError where torch's baton would wait for ever
        calls.append(name)
        try:
            if release is not None:
                assert release.wait(30)
            (Path(build_directory) / f"{name}.so").write_bytes(b"\0")
        finally:
            os.close(fd)
            lock.unlink()
        return name

    return build


def test_a_build_cut_off_in_a_dead_process_is_built_again_from_an_empty_folder(tmp_path, capsys):
    calls: list[str] = []
    load = hashed_loader(_torch_like_build(calls), tmp_path, hash_files=False)
    name = load("k", "int a;")
    folder = tmp_path / name
    (folder / f"{name}.so").unlink()
    (folder / "lock").write_bytes(b"")  # what a worker killed mid-build leaves: torch's lock and half its objects
    (folder / "k.o").write_bytes(b"truncated")
    assert load("k", "int a;") == name
    assert calls == [name, name] and not (folder / "lock").exists() and not (folder / "k.o").exists()
    assert (folder / f"{name}.so").exists()
    assert not list((tmp_path / ".stale").iterdir())  # the dead build's folder was moved aside and removed
    err = capsys.readouterr().err
    assert "stale build lock" in err and " built in " in err.split("stale build lock")[1]


def test_a_live_build_is_waited_for_and_its_lock_left_alone(tmp_path, capsys):
    import threading

    calls: list[str] = []
    release = threading.Event()
    first = hashed_loader(_torch_like_build(calls, release), tmp_path, hash_files=False)
    second = hashed_loader(_torch_like_build(calls), tmp_path, hash_files=False)  # as another process wraps it
    results: list[str] = []
    building = threading.Thread(target=lambda: results.append(first("k", "int a;")))
    building.start()
    while not calls:
        time.sleep(0.01)
    waiting = threading.Thread(target=lambda: results.append(second("k", "int a;")))
    waiting.start()
    deadline = time.monotonic() + 10
    while "waiting for that build" not in (said := capsys.readouterr().err) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "waiting for that build" in said
    assert (tmp_path / calls[0] / "lock").exists() and waiting.is_alive()  # not taken for a dead build's
    release.set()
    building.join(30)
    waiting.join(30)
    assert results == [calls[0], calls[0]] and calls == [calls[0], calls[0]]
    assert "stale" not in capsys.readouterr().err
