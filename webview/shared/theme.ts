// Colours and fonts of the current VS Code theme, read from the CSS variables VS Code sets on the
// webview's <html>; charts draw on canvas, so they need the values, not the variables.
import type { ChartColor } from '../../src/protocol/metricsProtocol';

export interface ChartTheme {
  foreground: string;
  grid: string;
  font: string;
  palette: Record<ChartColor, string>;
}

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

export function readTheme(): ChartTheme {
  const dark = document.body.classList.contains('vscode-dark') || document.body.classList.contains('vscode-high-contrast');
  const family = cssVar('--vscode-font-family', 'sans-serif');
  const size = cssVar('--vscode-font-size', '13px');
  return {
    foreground: cssVar('--vscode-charts-foreground', cssVar('--vscode-foreground', dark ? '#cccccc' : '#333333')),
    grid: cssVar('--vscode-charts-lines', dark ? 'rgba(204,204,204,0.18)' : 'rgba(51,51,51,0.14)'),
    font: `${size} ${family}`,
    // Some themes leave charts.orange at its default, a translucent minimap colour: lines need it opaque.
    palette: {
      blue: opaque(cssVar('--vscode-charts-blue', '#3794ff')),
      orange: opaque(cssVar('--vscode-charts-orange', '#d18616')),
      green: opaque(cssVar('--vscode-charts-green', '#388a34')),
      red: opaque(cssVar('--vscode-charts-red', '#e51400')),
      purple: opaque(cssVar('--vscode-charts-purple', '#652d90')),
      yellow: opaque(cssVar('--vscode-charts-yellow', '#bf8803')),
    },
  };
}

/** The colour without its alpha channel (#rrggbbaa, #rgba, rgba()). */
export function opaque(color: string): string {
  const hex = /^#([0-9a-f]{8}|[0-9a-f]{4})$/i.exec(color);
  if (hex) return hex[1]!.length === 8 ? `#${hex[1]!.slice(0, 6)}` : `#${hex[1]!.slice(0, 3)}`;
  const rgba = /^rgba\(([^,]+),([^,]+),([^,]+),[^)]+\)$/i.exec(color);
  if (rgba) return `rgb(${rgba[1]!.trim()}, ${rgba[2]!.trim()}, ${rgba[3]!.trim()})`;
  return color;
}

/** The colour with the given opacity (for the raw, unsmoothed line under the smoothed one). */
export function withAlpha(color: string, alpha: number): string {
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color);
  if (hex) {
    const h = hex[1]!.length === 3 ? [...hex[1]!].map((c) => c + c).join('') : hex[1]!;
    const a = Math.round(alpha * 255).toString(16).padStart(2, '0');
    return `#${h}${a}`;
  }
  const rgb = /^rgba?\(([^)]+)\)$/i.exec(color);
  if (rgb) {
    const [r, g, b] = rgb[1]!.split(',').map((s) => s.trim());
    return `rgba(${r}, ${g}, ${b}, ${alpha})`;
  }
  return color;
}
