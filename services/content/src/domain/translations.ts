/**
 * Automatic translation of questions. The provider is pluggable; none is configured by default,
 * so lists return only translations that were stored (for example by an import).
 */
export interface TranslationProvider {
  /** Translates title and description (HTML) from one language to another. */
  translate(
    input: { title: string; description: string | null },
    from: string,
    to: string,
  ): Promise<{ title: string; description: string | null }>;
  supports(language: string): boolean;
}

export const noTranslationProvider: TranslationProvider | null = null;
