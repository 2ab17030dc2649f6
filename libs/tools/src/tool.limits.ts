/** Bounds applied to what a model asks a person; longer text is cut, extra options are dropped. */
export const HUMAN_TOOL_LIMITS = {
  questionBytes: 2000,
  optionLabelBytes: 200,
  optionDescriptionBytes: 500,
  maxOptions: 20,
  titleBytes: 300,
  documentBytes: 64 * 1024,
} as const;

export const FINISH_SUMMARY_MAX_BYTES = 4000;

export const WORKSPACE_PATH_MAX_BYTES = 256;
