// The Compare Runs panel's pure part lives in src/protocol/compareData.ts (the webview runs it too).
export * from '../../protocol/compareData';
