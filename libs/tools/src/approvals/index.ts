export { argsDigest, canonicalJson } from './args.digest';
export { hasEffects, isApprovable, offeredTools, permissionOf } from './tool.permissions';
export { describeCall, foldersOf, grantKey, grantMember, isFileTool, membersToLookUp, type CallScope, type GrantNeed } from './call.scope';
export { coverWithoutAsking } from './call.policy';
export { answerApproval, type ApprovalPolicy } from './approval.answer';
export { approvalPrompt } from './approval.prompt';
export { approvalVerdict, withApproverEdits, type ApprovalVerdict } from './approval.result';
