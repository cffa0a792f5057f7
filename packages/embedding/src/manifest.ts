// manifest.json: what a model folder holds and how its vectors are made. docs/embedding.md describes
// the format; infra/ensure-model.sh writes it.
import { z } from 'zod';

export const manifestSchema = z.object({
  model: z.string().min(1).describe('the model’s name, stored with every vector made by it'),
  dimensions: z.number().int().positive().describe('length of a vector'),
  max_tokens: z.number().int().min(3).describe('tokens the model reads, [CLS] and [SEP] included: longer text is cut'),
  pooling: z.enum(['mean', 'cls']).describe('mean of the token vectors under the attention mask, or the [CLS] token’s'),
  normalize: z.boolean().default(true).describe('vectors are scaled to length 1 (cosine = dot product)'),
  prefixes: z
    .object({ query: z.string().default(''), passage: z.string().default('') })
    .default({ query: '', passage: '' })
    .describe('text put before a query or a passage (e5: "query: ", "passage: ")'),
  onnx: z
    .string()
    .default('model.onnx')
    .describe('the ONNX graph: int64 input_ids, attention_mask (token_type_ids if it has it) → last_hidden_state'),
  output: z.string().default('last_hidden_state').describe('the graph’s output of token vectors [batch, sequence, dimensions]'),
  tokenizer: z
    .object({ type: z.literal('wordpiece'), vocab: z.string().default('vocab.txt'), lowercase: z.boolean() })
    .describe('how text becomes token ids'),
  batch_size: z
    .number()
    .int()
    .positive()
    .default(2)
    .describe(
      'texts run through the graph together: 1 for a dynamically quantized graph, which scales its activations over the whole batch (a text’s vector would depend on the others)',
    ),
  languages: z.array(z.string()).default(['en']).describe('languages the model was trained on'),
  source: z
    .object({ registry: z.string(), package: z.string(), version: z.string(), sha256: z.string() })
    .partial()
    .optional()
    .describe('where the weights came from'),
  model_sha256: z.string().optional().describe('sha256 of the ONNX file'),
});

export type Manifest = z.infer<typeof manifestSchema>;
