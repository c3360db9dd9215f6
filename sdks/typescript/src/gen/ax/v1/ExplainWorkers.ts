// Original file: ax/v1/admin.proto


export interface ExplainWorkers {
  'sessions'?: (number);
  'serving'?: (number);
  'capacity'?: (number);
  'free_credits'?: (number);
}

export interface ExplainWorkers__Output {
  'sessions': (number);
  'serving': (number);
  'capacity': (number);
  'free_credits': (number);
}
