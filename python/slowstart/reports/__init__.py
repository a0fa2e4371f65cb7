"""Reports of many stored runs: `slowstart report`'s HTML page and the scorecard
(`slowstart score`). The last layer below the CLI."""
