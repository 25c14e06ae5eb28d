export { PLANNER_AGENT } from './classification-result.handler';
export { startPlanner } from './planner.app';
export { SELECTION_THRESHOLD, planExecution, type PlannerOptions } from './planner.rules';
