export type SignalType = 'beacon' | 'capture' | 'note' | 'checkin' | 'alert';

export interface SignalBody {
  type: SignalType;
  lat?: number;
  lng?: number;
  accuracy?: number;
  note?: string;
  image_url?: string;
  org_id?: number;
  ticket_id?: number;
  meta?: { device_id?: string; [key: string]: unknown };
  recorded_at?: string;
}

export interface Signal {
  Id: number | null;
  type: SignalType;
  org_id: number;
  note: string | null;
  image_url: string | null;
  created_at: string;
}

export interface Me {
  id: number;
  name: string;
  email: string;
}

export interface Org {
  id: number;
  name: string;
  slug: string;
  role: string;
  primary: boolean;
  personal: boolean;
  locked: boolean;
}

export interface Fix {
  lat: number;
  lng: number;
  accuracy: number;
  at: number;
}

export interface MyIncident {
  Id: number;
  org_id: number;
  title: string;
  description: string | null;
  status: 'open' | 'in_progress' | 'resolved' | 'closed';
  priority: 'low' | 'normal' | 'high' | 'urgent';
  lat: number | null;
  lng: number | null;
  location_name: string | null;
  assignee_id: number | null;
  acknowledged_at?: string | null;
}
