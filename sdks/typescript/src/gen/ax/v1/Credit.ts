// Original file: ax/v1/worker.proto


export interface Credit {
  'grant'?: (number);
  'reset'?: (boolean);
}

export interface Credit__Output {
  'grant': (number);
  'reset': (boolean);
}
