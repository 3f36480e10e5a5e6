"""Download a missing NLTK model into the configured nltk_data folder."""

from privtext.runtime.logs import setup_logging
from privtext.data.nlp_resources import NLTK_NER_RESOURCES, download_nltk

setup_logging(snakemake.log[0])
package = {path: name for name, path in NLTK_NER_RESOURCES.items()}[snakemake.wildcards.nltk_resource_path]
# The NLTK_DATA root is the output folder minus the resource's relative path.
nltk_data = snakemake.output[0][: -len(snakemake.wildcards.nltk_resource_path)]
download_nltk(package, nltk_data)
