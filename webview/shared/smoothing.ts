// The EMA lives in src/protocol (the Compare Runs host smooths before it decimates); the panels import it from here.
export { emaSmooth } from '../../src/protocol/smoothing';
