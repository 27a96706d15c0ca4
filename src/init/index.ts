// init/ owns `kiwi init`: the example tools as data and writing them without overwriting anything.
// It must not validate or lock by itself; it calls the lockfile code for the first lock.
export { planScaffold } from "./scaffold-plan.ts";
export { writeScaffold } from "./scaffold-io.ts";
export { TEMPLATES } from "./templates.ts";
