/** Tables of solutions, ratings, upvotes, comments, attachments, forwards, shares, validation requests. */
// biome-ignore lint/complexity/noBannedTypes: filled in as the tables are created
export type SolutionTables = {};
