/** The most partitions a deployment can have (`partitionOf`, `Health.partitions`). */
export const MAX_PARTITIONS = 256;
