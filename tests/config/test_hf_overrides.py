"""Which `--hf-overrides` leave vLLM's derived maximum length as it is (reader/config/hf_overrides.py): only
rope mappings, at the releases whose handling was read (0.18.0; 0.32.0 on)."""
from reader.config.hf_overrides import keeps_derived_max_len

YARN = '{"rope_scaling": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 32768}}'


def test_a_yarn_override_keeps_the_derived_length_at_the_releases_read():
    assert keeps_derived_max_len(YARN, (0, 18, 0)) is True
    assert keeps_derived_max_len(YARN, (0, 32, 0)) is True
    assert keeps_derived_max_len(YARN, (0, 33, 0)) is True


def test_a_release_not_read_says_nothing():
    assert keeps_derived_max_len(YARN, (0, 17, 1)) is None
    assert keeps_derived_max_len(YARN, (0, 25, 0)) is None


def test_a_scaling_factor_vllm_applies_or_any_other_override_says_nothing():
    linear = {"rope_scaling": {"rope_type": "linear", "factor": 2.0}}
    assert keeps_derived_max_len(linear, (0, 32, 0)) is None
    assert keeps_derived_max_len({"max_position_embeddings": 131072}, (0, 32, 0)) is None
    assert keeps_derived_max_len({**linear, "max_position_embeddings": 65536}, (0, 18, 0)) is None
    assert keeps_derived_max_len("not json", (0, 32, 0)) is None
