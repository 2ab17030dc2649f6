export { matchOption, normaliseOption } from './option.match';
export { declaredChoices, menuChoices, findChoice, type ChoiceRole, type PointChoice } from './checkpoint.choices';
export { decidePrompt, editPrompt, DOCUMENT_HEADING } from './checkpoint.prompt';
export { interpretDecision, NOT_CONFIRMED_OPTION, type CheckpointAction } from './checkpoint.answer';
export { nextExitStep, MAX_CHECKPOINT_ROUNDS, type ExitInput, type ExitStep, type ProceedWhy, type SettleWhy, type VisitCheckpoint } from './stage.exit';
