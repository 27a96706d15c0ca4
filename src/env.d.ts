// Data files bundled into the binary as text (Bun's text loader).
declare module "*.yaml" {
  const text: string;
  export default text;
}
