// Template scripts bundled into the binary as text (Bun's text loader), like the YAML built-ins.
declare module "*.py" {
  const text: string;
  export default text;
}
declare module "*.sh" {
  const text: string;
  export default text;
}
