/** Tables of questions, categories, tags, tag links, knowledge spaces, follows, flags, views. */
// biome-ignore lint/complexity/noBannedTypes: filled in as the tables are created
export type QuestionTables = {};
