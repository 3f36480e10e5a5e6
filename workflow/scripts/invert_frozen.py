"""results/inversion/{dataset}/{encoder}/frozen.json: word recovery (privtext.attack.inversion), the attribute
attackers and identification (privtext.attack.identification) on the frozen encoder features, the attack ladder's
"no defence" rung."""

from pathlib import Path

import numpy as np

from privtext.attack.inversion import read_word_sets, recover_words
from privtext.data import SPLITS
from privtext.jobs.runs import attack_features, encoder_window, identify_frozen, json_text
from privtext.runtime.logs import finish_job, setup_logging

setup_logging(snakemake.log[0])
features = {split: np.load(snakemake.input[f"features_{split}"], allow_pickle=False) for split in SPLITS}
result = recover_words(features, read_word_sets(snakemake.input.words), attacker=snakemake.params.word_attacker,
                       seed=snakemake.params.seed, max_train=snakemake.params.max_train)
attributes = attack_features(Path(snakemake.input.meta).parent, features, snakemake.params.attackers,
                             seed=snakemake.params.seed, max_train=snakemake.params.max_train, threads=snakemake.threads,
                             device=snakemake.config["attack"]["device"], deterministic=snakemake.config["deterministic"])
settings = snakemake.params.identification
identification = ({"status": "not measured: attack.identification is null"} if settings is None else
                  identify_frozen(Path(snakemake.input.meta).parent, features, snakemake.input.words,
                                  snakemake.input.words_record, settings, seed=snakemake.params.seed,
                                  max_words=encoder_window(snakemake.input.features_train)))
Path(snakemake.output[0]).write_text(json_text({**result, "release": "frozen encoder features",
                                                "attributes": attributes, "identification": identification}))
finish_job()
