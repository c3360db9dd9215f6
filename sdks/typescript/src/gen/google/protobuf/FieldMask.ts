// Original file: null


export interface FieldMask {
  'paths'?: (string)[];
}

export interface FieldMask__Output {
  'paths': (string)[];
}
