"""A LeaderWorkerSet's pods get LWS_GROUP_SIZE, LWS_WORKER_INDEX and LWS_LEADER_ADDRESS from the controller, not
from the manifest; launches that compute their parallel sizes from them (llm-d's wide-EP decode) are read with
the values the controller would set in the group's leader, and the report says so."""
from __future__ import annotations


from reader.config.context import LoadOptions
from reader.config.load import load_deployment

LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: wide-ep
spec:
  leaderWorkerTemplate:
    size: {size}
    workerTemplate:
      spec:
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          command: ["/bin/bash", "-c"]
          args:
          - |-
            START_RANK=$(( ${{LWS_WORKER_INDEX:-0}} * DP_SIZE_LOCAL ))
            exec vllm serve deepseek-ai/DeepSeek-R1 --enable-expert-parallel \\
              --data-parallel-size $((LWS_GROUP_SIZE * DP_SIZE_LOCAL)) \\
              --data-parallel-size-local $DP_SIZE_LOCAL \\
              --data-parallel-address ${{LWS_LEADER_ADDRESS}} \\
              --data-parallel-start-rank $START_RANK
          env:
          - name: DP_SIZE_LOCAL
            value: "8"
          resources:
            limits:
              nvidia.com/gpu: "8"
"""


def load(tmp_path, size: int = 2, **options):
    path = tmp_path / "lws.yaml"
    path.write_text(LWS.format(size=size))
    return load_deployment(str(path), LoadOptions(**options))


def test_the_group_size_of_the_template_sets_the_data_parallel_size(tmp_path):
    d = load(tmp_path, size=2)
    assert d.flags["data_parallel_size"].value == 16  # 2 pods x 8 local ranks
    assert d.flags["data_parallel_start_rank"].value == 0  # the leader's ranks
    assert d.flags["data_parallel_address"].value == "wide-ep-0.wide-ep.default"
    assert not d.placeholders


def test_a_larger_group_scales_the_arithmetic(tmp_path):
    assert load(tmp_path, size=4).flags["data_parallel_size"].value == 32


def test_the_report_says_where_the_values_came_from_and_how_to_change_them(tmp_path):
    d = load(tmp_path, size=2)
    notes = [n.message for n in d.notes if "LeaderWorkerSet controller" in n.message]
    assert len(notes) == 1 and notes[0].startswith("LWS_GROUP_SIZE=2")
    assert "--set NAME=VALUE" in notes[0]


def test_set_overrides_what_the_controller_would_set(tmp_path):
    assert load(tmp_path, size=2, set={"LWS_GROUP_SIZE": "3"}).flags["data_parallel_size"].value == 24


def test_outside_a_leaderworkerset_the_arithmetic_stays_unknown_and_names_the_variable_to_set(tmp_path):
    path = tmp_path / "deploy.yaml"
    path.write_text(LWS.format(size=2).replace("leaderworkerset.x-k8s.io/v1", "apps/v1").replace(
        "LeaderWorkerSet", "Deployment"))
    d = load_deployment(str(path), LoadOptions())
    assert d.flags["data_parallel_size"].value is None  # the default applies, said in a warning
    warning = next(n.message for n in d.notes if "value of --data-parallel-size" in n.message)
    assert "$((LWS_GROUP_SIZE * DP_SIZE_LOCAL))" in warning and "--set LWS_GROUP_SIZE=VALUE" in warning
    assert not any("LeaderWorkerSet controller" in n.message for n in d.notes)
