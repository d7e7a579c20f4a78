"""The vllm backend's batches and structured-output requests, against a stand-in for ``vllm.LLM``.

vllm itself is never installed outside GPU workers; the stand-in records what the backend asks of it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from types import SimpleNamespace

import pytest

from annotation.kinds import get_kind
from annotation.kinds.copa_likert import FACTORS
from config.celery import app
from judges.backends import get_backend, vllm_local
from judges.backends.base import CallOptions, RetryPolicy
from judges.backends.vllm_local import VllmBackend
from judges.errors import VLLM_NOT_INSTALLED, BackendMisconfigured, BackendUnavailable
from judges.models import Judge, Suggestion
from judges.prompting import get_prompt
from judges.tasks import run_chunk_gpu_task
from tests.judges.conftest import add_items, make_judge, run_now

GOOD = json.dumps({"scores": dict.fromkeys(FACTORS, 1)})


class StandInLLM:
    """Answers every prompt with ``answer(messages, params, call)``; records engines and calls."""

    engines: list[dict] = []
    calls: list[dict] = []
    answer = staticmethod(lambda messages, params, call: GOOD)

    def __init__(self, model: str, **options) -> None:
        StandInLLM.engines.append({"model": model, **options})

    def chat(self, messages, sampling_params, use_tqdm):
        call = len(StandInLLM.calls) + 1
        StandInLLM.calls.append({"messages": messages, "params": sampling_params, "use_tqdm": use_tqdm})
        return [
            SimpleNamespace(
                prompt_token_ids=[1] * 10,
                outputs=[SimpleNamespace(text=(text := StandInLLM.answer(m, p, call)), token_ids=[2] * len(text))],
            )
            for m, p in zip(messages, sampling_params, strict=True)
        ]


def stand_in_vllm(*, structured_outputs: bool = True) -> SimpleNamespace:
    """What the backend uses of the vllm package: LLM, SamplingParams and the structured-output params."""
    params = (
        SimpleNamespace(StructuredOutputsParams=lambda json: ("structured", json))
        if structured_outputs
        else SimpleNamespace(GuidedDecodingParams=lambda json: ("guided", json))
    )
    return SimpleNamespace(LLM=StandInLLM, SamplingParams=lambda **kw: kw, sampling_params=params)


class StandInVllmBackend(VllmBackend):
    def __init__(self) -> None:
        super().__init__(vllm=stand_in_vllm())


#: The operator's models: names a judge may use, and what the worker loads for each.
MODELS = {"qwen3-8b": "Qwen/Qwen3-8B", "test-model": "/models/test-model"}


@pytest.fixture(autouse=True)
def _configured_models(settings):
    settings.VLLM_MODELS = MODELS


@pytest.fixture(autouse=True)
def _fresh_engine(monkeypatch):
    monkeypatch.setattr(vllm_local, "_engine", None)
    StandInLLM.engines, StandInLLM.calls = [], []
    StandInLLM.answer = staticmethod(lambda messages, params, call: GOOD)


OPTIONS = CallOptions(concurrency=1, timeout=1, retry=RetryPolicy(3, 2, 0, 0))
COPA = get_prompt("copa_likert_evaluation")


def complete(backend, count=3, payloads=None):
    judge = Judge(model="qwen3-8b", temperature=0.0, max_tokens=512, seed=42)
    payloads = payloads or [get_kind("copa_likert").example_payload()] * count
    requests = [COPA.build(item_id=n, payload=p) for n, p in enumerate(payloads)]
    return requests, backend.complete(requests, judge=judge, prompt=COPA, options=OPTIONS, stop=threading.Event())


class RequestBuildingTests:
    def test_one_batch_with_structured_output_and_the_judge_s_sampling(self, settings):
        settings.VLLM_ENGINE_OPTIONS = '{"max_model_len": 8192}'
        requests, outcomes = complete(VllmBackend(vllm=stand_in_vllm()))
        assert StandInLLM.engines == [{"model": "Qwen/Qwen3-8B", "max_model_len": 8192}]
        (call,) = StandInLLM.calls
        assert call["messages"] == [r.messages for r in requests] and call["use_tqdm"] is False
        assert call["params"][0] == {
            "temperature": 0.0,
            "max_tokens": 512,
            "seed": 42,
            "structured_outputs": ("structured", requests[0].schema),
        }
        assert [o.status for o in outcomes] == ["ok"] * 3
        assert (outcomes[0].tokens_in, outcomes[0].tokens_out, outcomes[0].attempts) == (10, len(GOOD), 1)

    def test_older_vllm_gets_guided_decoding(self):
        requests, _ = complete(VllmBackend(vllm=stand_in_vllm(structured_outputs=False)), count=1)
        assert StandInLLM.calls[0]["params"][0]["guided_decoding"] == ("guided", requests[0].schema)

    def test_a_judge_row_naming_an_unconfigured_model_is_refused_before_anything_loads(self):
        backend = VllmBackend(vllm=stand_in_vllm())
        for model in ("/etc", "Qwen/Qwen3-8B"):  # a path, and a repository not under its configured name
            judge = Judge(model=model, temperature=0.0, max_tokens=16, seed=1)
            requests = [COPA.build(item_id=0, payload=get_kind("copa_likert").example_payload())]
            with pytest.raises(BackendMisconfigured, match=f"unknown model '{model}' for 'vllm'"):
                backend.complete(requests, judge=judge, prompt=COPA, options=OPTIONS, stop=threading.Event())
        assert StandInLLM.engines == []

    def test_the_engine_is_loaded_once_per_worker(self):
        backend = VllmBackend(vllm=stand_in_vllm())
        complete(backend)
        complete(backend)
        assert len(StandInLLM.engines) == 1 and len(StandInLLM.calls) == 2

    def test_invalid_answers_are_asked_again_in_a_smaller_batch_then_failed(self):
        StandInLLM.answer = staticmethod(
            lambda messages, params, call: GOOD if "#bad#" not in str(messages) or call > 5 else '{"scores": {"CT": 3'
        )
        good = get_kind("copa_likert").example_payload()
        bad = {**good, "question": "#bad# " + good["question"]}
        _, outcomes = complete(VllmBackend(vllm=stand_in_vllm()), payloads=[good, bad, good])
        assert [len(c["messages"]) for c in StandInLLM.calls] == [3, 1]
        assert [o.status for o in outcomes] == ["ok", "failed", "ok"]
        assert outcomes[1].raw_output == '{"scores": {"CT": 3' and outcomes[1].value is None
        assert outcomes[1].reason.startswith("not valid JSON") and outcomes[1].reason.endswith("(after 2 answers)")

    def test_an_engine_failure_is_transient(self):
        def broken(messages, params, call):
            raise RuntimeError("CUDA out of memory")

        StandInLLM.answer = staticmethod(broken)
        with pytest.raises(BackendUnavailable, match="vLLM generation failed: RuntimeError: CUDA out of memory"):
            complete(VllmBackend(vllm=stand_in_vllm()))


class WithoutVllmTests:
    def test_the_web_app_never_imports_vllm(self):
        code = (
            "import django, os, sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings');"
            "django.setup();"
            "import judges.views, judges.tasks, judges.backends.vllm_local, judges.management.commands.run_judge;"
            "from judges.backends import get_backend; get_backend('vllm');"
            "print('vllm' in sys.modules)"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert done.stdout.strip() == "False"

    def test_a_worker_without_vllm_says_how_to_install_it(self):
        with pytest.raises(BackendMisconfigured) as caught:
            get_backend("vllm").vllm  # noqa: B018 - the lazy import is what is tested
        assert caught.value.message == VLLM_NOT_INSTALLED

    @pytest.mark.django_db(transaction=True)
    def test_a_run_on_a_worker_without_vllm_stops_with_that_reason(self, copa):
        add_items(copa, 3)
        run = run_now(make_judge("copa_likert", "vllm"), copa)
        assert (run.status, run.last_error) == ("failed", VLLM_NOT_INSTALLED)
        assert not Suggestion.objects.exists()


@pytest.mark.django_db(transaction=True)
class GpuRunTests:
    def test_vllm_chunks_go_to_the_gpu_queue_and_store_suggestions(self, copa, settings):
        settings.CONCORD_JUDGE_BACKENDS = {
            **settings.CONCORD_JUDGE_BACKENDS,
            "vllm": "tests.judges.unit.test_vllm_backend.StandInVllmBackend",
        }
        route = app.amqp.router.route({}, run_chunk_gpu_task.name, ("judge", 1), {})
        assert route["queue"].name == "gpu"
        add_items(copa, 600)
        run = run_now(make_judge("copa_likert", "vllm"), copa)
        assert (run.status, run.ok_count, run.chunk_size, run.chunks.count()) == ("completed", 600, 512, 2)
        assert [len(c["messages"]) for c in StandInLLM.calls] == [512, 88]
        assert Suggestion.objects.filter(run=run, status="ok").count() == 600
